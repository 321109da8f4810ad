// Package adapter is the gRPC adapter of the application layer (package
// compiler): each handler decodes the request into the application layer's
// types, validating every field in the same pass, calls one use case,
// encodes the result, and maps any error to a gRPC status with google.rpc
// error details in the one function ToStatus. Its codec (Codec, with
// ServiceDesc) sets aside requests that do not decode, so that they are
// answered INVALID_ARGUMENT, and names a whole state from the bytes it came
// in. It knows nothing of listeners, credentials or admission: the transport
// (package server) serves it and tells it of a call through the call's
// context (call.go).
//
// Protobuf types stop here: nothing below this package imports gen/, and the
// opaque state blob (package adapter/stateblob) is a wire format too.
package adapter
