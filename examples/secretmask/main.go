// Command secretmask serves ctxc with a policy of its own: mask_secrets
// (package masksecrets) beside the built-in policies, which the profiles of
// its config file name by type like any other.
//
//	go run . --config ctxc.yaml --listen 127.0.0.1:50051
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/contextcompiler/ctxc/examples/secretmask/masksecrets"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/server"
)

func main() {
	// SIGTERM or Ctrl-C stops it as `ctxc serve` stops: drain, then grace.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "secretmask:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends.
func run(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("secretmask", flag.ContinueOnError)
	configFile := flags.String("config", "ctxc.yaml", "ctxc's config file, whose profiles may name mask_secrets")
	listenAddr := flags.String("listen", "", "the gRPC address, in place of the file's listen (127.0.0.1:0: any free port)")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	config, listen := *configFile, *listenAddr

	cfg, err := server.LoadConfigFile(config)
	if err != nil {
		return err
	}
	if listen != "" {
		cfg.Listen = listen
	}
	// The program's own policies, served beside the built-in ones. Start
	// refuses a type a built-in policy has, naming both.
	cfg.Policies = []policies.Factory{masksecrets.NewFactory()}

	srv, err := server.Start(ctx, cfg) // a *server.ConfigError lists every problem
	if err != nil {
		return err
	}
	fmt.Println("serving on", srv.Addr())
	return srv.Wait()
}
