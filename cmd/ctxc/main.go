// Command ctxc serves the context compiler over gRPC and runs its profiles
// offline. See `ctxc help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}, os.LookupEnv)
	stop()
	os.Exit(code)
}
