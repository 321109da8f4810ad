// Package client is the Go client of ctxc: a connection with production
// defaults (retries of UNAVAILABLE through the gRPC service config, keepalive
// within the server's ping policy, the server's 32 MiB message limit), the
// generated ContextCompilerServiceClient for every RPC, builders for states
// and messages, a Route Session kept as an opaque state blob, and the reading
// of ctxc's error details. Options are plain grpc.DialOptions, so TLS and
// per-RPC credentials plug in as they do for any gRPC client.
package client
