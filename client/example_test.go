package client_test

import (
	"context"
	"fmt"
	"log"

	"github.com/contextcompiler/ctxc/client"
	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// The README's quick start (compiled here; run against the binary in
// integration/client_test.go).
func Example() {
	ctx := context.Background()
	c, err := client.New("127.0.0.1:50051") // `ctxc serve`
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	state := client.State("gpt-4o", "You are helpful.", client.User("u1", "Hello!"))
	reply, err := c.Compile(ctx, &ctxcv1.CompileRequest{State: state, Profile: "budget-aware"})
	if err != nil {
		log.Fatalf("%v (reason %s)", err, client.Reason(err))
	}
	session := c.NewSession(&ctxcv1.ModelSpec{Name: "gpt-4o"}, "agent-1", "")
	if _, err := session.User(ctx, client.User("", "Fix the failing tests.")); err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(reply.GetMessages()), len(session.Blob()))
}
