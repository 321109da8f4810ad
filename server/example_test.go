package server_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"

	"github.com/contextcompiler/ctxc/client"
	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/server"
)

// Run ctxc inside a Go program, on a free loopback port, and call it with
// the Go client.
func ExampleStart() {
	ctx := context.Background()
	cfg := server.NewConfig() // or server.LoadConfigFile("ctxc.yaml")
	cfg.Listen = "127.0.0.1:0"
	cfg.Logger = slog.New(slog.DiscardHandler)
	srv, err := server.Start(ctx, cfg)
	if err != nil {
		log.Fatal(err) // a *server.ConfigError lists every problem
	}
	defer srv.Close()

	c, err := client.New(srv.Addr())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	state := client.State("gpt-4o", "You are helpful.", client.User("u1", "Hello!"))
	reply, err := c.Compile(ctx, &ctxcv1.CompileRequest{State: state, Profile: "budget-aware"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(reply.GetMessages()), "messages")

	// As `ctxc serve` on SIGTERM: drain delay, then the grace period.
	if err := srv.Shutdown(ctx); err != nil {
		log.Fatal(err)
	}
	// Output: 2 messages
}
