// Package service is ctxc's transport: the gRPC server that serves the API's
// adapter (package adapter) and everything around it: listeners on TCP or a
// Unix socket, TLS with certificates reloaded on change, bearer tokens and
// the caller in the context, admission control by calls and in-flight bytes,
// call deadlines, interceptors for logging, panic recovery and Prometheus,
// the OpenTelemetry stats handler, health, reflection, message size,
// connection and keepalive limits, drain and graceful shutdown, direct calls
// in process for the proxy (package server/proxy), and the HTTP/JSON gateway
// in front of it (CORS, content type, Host allow-list, client address, HTTP
// timeouts), which also mounts the proxy on the HTTP port.
//
// What it learns of a call that the adapter needs (the caller, the call's
// share of the in-flight budget, whether it came over a connection) passes
// through the call's context with the adapter's functions.
package service
