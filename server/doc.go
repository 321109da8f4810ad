// Package server owns the gRPC adapter of ctxc: it validates requests while
// converting them from protobuf to the policies domain types, runs the
// pipeline, converts the results back, and maps every domain error to a gRPC
// status with google.rpc error details. It also owns the transport around the
// service: listeners (TCP or Unix socket), interceptors (logging, panic
// recovery, Prometheus), the OpenTelemetry stats handler, health, reflection,
// message size and keepalive limits, and graceful shutdown.
//
// Protobuf types stop here: nothing below this package imports gen/.
package server
