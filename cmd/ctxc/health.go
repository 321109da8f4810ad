package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/contextcompiler/ctxc/internal/service"
)

func runHealth(ctx context.Context, args []string, io stdio, lookupEnv func(string) (string, bool)) int {
	fs := newFlagSet(io, "health", "[--addr ADDRESS] [--service NAME] [--timeout DURATION] [--wait] [--tls] [--tls-ca FILE] [--tls-client-cert FILE --tls-client-key FILE]",
		"Ask a running server for its grpc.health.v1 status and print it. Exit 0 when SERVING,\n"+
			"1 otherwise. Made for container health checks in images without a shell; with --wait,\n"+
			"for scripts that start a server and wait until it serves.")
	addr := fs.String("addr", defaultHealthAddr(lookupEnv), "server address: host:port or unix:///path (default from CTXC_LISTEN)")
	serviceName := fs.String("service", "", `service to check; "" is the whole server`)
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	wait := fs.Bool("wait", false, "keep asking until the answer is SERVING or --timeout passes, connecting again every few milliseconds while the server is not up")
	env := func(k string) string { v, _ := lookupEnv(k); return v }
	useTLS := fs.Bool("tls", env("CTXC_TLS_CERT") != "", "speak TLS (default true when CTXC_TLS_CERT is set); without --tls-ca the server's certificate is not verified, which suits a probe of the local server")
	caFile := fs.String("tls-ca", "", "PEM CA certificates to verify the server's certificate with")
	certFile := fs.String("tls-client-cert", clientCertDefault(env, "CTXC_TLS_CERT"), "PEM client certificate for mTLS (default CTXC_TLS_CERT when CTXC_TLS_CLIENT_CA is set)")
	keyFile := fs.String("tls-client-key", clientCertDefault(env, "CTXC_TLS_KEY"), "PEM key of --tls-client-cert (default CTXC_TLS_KEY when CTXC_TLS_CLIENT_CA is set)")
	if code, done := parseFlags(fs, io, args); done {
		return code
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	creds := insecure.NewCredentials()
	if *useTLS {
		c, err := probeTLS(*caFile, *certFile, *keyFile)
		if err != nil {
			fmt.Fprintf(io.err, "ctxc health: %v\n", err)
			return exitError
		}
		creds = c
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	if *wait {
		// gRPC waits a second before it connects again by default: a server
		// starting up is there within milliseconds.
		opts = append(opts, grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: backoff.Config{BaseDelay: waitInterval, Multiplier: 1, MaxDelay: waitInterval}, MinConnectTimeout: *timeout}))
	}
	conn, err := grpc.NewClient(service.DialTarget(*addr), opts...)
	if err != nil {
		fmt.Fprintf(io.err, "ctxc health: %v\n", err)
		return exitError
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	for {
		resp, err := client.Check(ctx, &healthpb.HealthCheckRequest{Service: *serviceName}, grpc.WaitForReady(true))
		if err != nil {
			fmt.Fprintf(io.err, "ctxc health: %s: %v\n", *addr, err)
			return exitError
		}
		if resp.GetStatus() == healthpb.HealthCheckResponse_SERVING || !*wait {
			fmt.Fprintln(io.out, resp.GetStatus())
			if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				return exitError
			}
			return exitOK
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(io.err, "ctxc health: %s: %s after %s\n", *addr, resp.GetStatus(), *timeout)
			return exitError
		case <-time.After(waitInterval):
		}
	}
}

// waitInterval is how often --wait connects and asks again.
const waitInterval = 2 * time.Millisecond

// defaultHealthAddr is where a server started with the same environment
// listens, with a wildcard host replaced by loopback.
func defaultHealthAddr(lookupEnv func(string) (string, bool)) string {
	addr, ok := lookupEnv("CTXC_LISTEN")
	if !ok || addr == "" {
		return defaultConfig().Listen
	}
	if _, isUnix := service.UnixSocketPath(addr); isUnix {
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

// clientCertDefault is the server's own certificate file (variable key) when
// the server asks clients for certificates.
func clientCertDefault(env func(string) string, key string) string {
	if env("CTXC_TLS_CLIENT_CA") == "" {
		return ""
	}
	return env(key)
}

// probeTLS is the health probe's TLS: verified against caFile when given,
// with a client certificate when given.
func probeTLS(caFile, certFile, keyFile string) (credentials.TransportCredentials, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile == "" {
		cfg.InsecureSkipVerify = true // a liveness probe of the local server sends nothing secret
	} else {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s: no PEM certificate", caFile)
		}
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return credentials.NewTLS(cfg), nil
}
