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
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/contextcompiler/ctxc/internal/server"
)

func runHealth(ctx context.Context, args []string, io stdio, lookupEnv func(string) (string, bool)) int {
	fs := newFlagSet(io, "health", "[--addr ADDRESS] [--service NAME] [--timeout DURATION] [--tls] [--tls-ca FILE] [--tls-client-cert FILE --tls-client-key FILE]",
		"Ask a running server for its grpc.health.v1 status and print it. Exit 0 when SERVING,\n"+
			"1 otherwise. Made for container health checks in images without a shell.")
	addr := fs.String("addr", defaultHealthAddr(lookupEnv), "server address: host:port or unix:///path (default from CTXC_LISTEN)")
	service := fs.String("service", "", `service to check; "" is the whole server`)
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
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
	conn, err := grpc.NewClient(server.DialTarget(*addr), grpc.WithTransportCredentials(creds))
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
