// Package server is ctxc's transport: the gRPC adapter of the application
// layer (package compiler) and everything around it. Each handler decodes the
// request into the application layer's types, validating every field in the
// same pass, calls one use case, encodes the result, and maps any error to a
// gRPC status with google.rpc error details in the one function toStatus.
// Around the service it owns the gRPC server (listeners on TCP or a Unix
// socket, TLS with certificates reloaded on change, bearer tokens and the
// caller in the context, admission control by calls and in-flight bytes,
// call deadlines, interceptors for logging, panic recovery and Prometheus,
// the OpenTelemetry stats handler, health, reflection, message size,
// connection and keepalive limits, drain and graceful shutdown) and the
// HTTP/JSON gateway in front of it (CORS, content type, Host allow-list,
// client address, HTTP timeouts), which also mounts the provider-compatible
// proxy of package server/proxy on the HTTP port.
//
// Protobuf types stop here: nothing below this package imports gen/, and the
// opaque state blob (package server/stateblob) is a wire format too.
package server
