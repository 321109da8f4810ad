package main

import (
	"context"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/contextcompiler/ctxc/server"
)

func runHealth(ctx context.Context, args []string, io stdio, lookupEnv func(string) (string, bool)) int {
	fs := newFlagSet(io, "health", "[--addr ADDRESS] [--service NAME] [--timeout DURATION]",
		"Ask a running server for its grpc.health.v1 status and print it. Exit 0 when SERVING,\n"+
			"1 otherwise. Made for container health checks in images without a shell.")
	addr := fs.String("addr", defaultHealthAddr(lookupEnv), "server address: host:port or unix:///path (default from CTXC_LISTEN)")
	service := fs.String("service", "", `service to check; "" is the whole server`)
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	if code, done := parseFlags(fs, io, args); done {
		return code
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	conn, err := grpc.NewClient(server.DialTarget(*addr), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintf(io.err, "ctxc health: %v\n", err)
		return exitError
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: *service}, grpc.WaitForReady(true))
	if err != nil {
		fmt.Fprintf(io.err, "ctxc health: %s: %v\n", *addr, err)
		return exitError
	}
	fmt.Fprintln(io.out, resp.GetStatus())
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return exitError
	}
	return exitOK
}

// defaultHealthAddr is where a server started with the same environment
// listens, with a wildcard host replaced by loopback.
func defaultHealthAddr(lookupEnv func(string) (string, bool)) string {
	addr, ok := lookupEnv("CTXC_LISTEN")
	if !ok || addr == "" {
		return defaultConfig().Listen
	}
	if _, isUnix := server.UnixSocketPath(addr); isUnix {
		return addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
