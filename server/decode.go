package server

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	protocodec "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// reasonMalformedRequest is the ErrorInfo reason of a request that is not a
// valid protobuf message of the method's type.
const reasonMalformedRequest = "MALFORMED_REQUEST"

// grpc-go answers a request it cannot unmarshal (bad wire format, a string
// that is not UTF-8) with INTERNAL, written before any handler or
// interceptor runs. The fault is the client's, so the API answers
// INVALID_ARGUMENT instead: the server's codec sets such an error aside
// instead of returning it, and each API method's decoding step takes it
// back and returns it as INVALID_ARGUMENT.

// decodeCodec is the proto codec, except that it sets aside the unmarshal
// errors of the API's request messages (their package is ctxc.v1).
type decodeCodec struct {
	proto encoding.CodecV2
	// failed maps a request message being decoded to its error.
	failed sync.Map
}

func newDecodeCodec() *decodeCodec {
	return &decodeCodec{proto: encoding.GetCodecV2(protocodec.Name)}
}

func (c *decodeCodec) Name() string                           { return protocodec.Name }
func (c *decodeCodec) Marshal(v any) (mem.BufferSlice, error) { return c.proto.Marshal(v) }
func (c *decodeCodec) Unmarshal(data mem.BufferSlice, v any) error {
	err := c.proto.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	if m, ok := v.(proto.Message); ok && m.ProtoReflect().Descriptor().ParentFile().Package() == "ctxc.v1" {
		c.failed.Store(v, err)
		return nil
	}
	return err
}

// take returns and forgets the error set aside for v.
func (c *decodeCodec) take(v any) error {
	err, ok := c.failed.LoadAndDelete(v)
	if !ok {
		return nil
	}
	return err.(error)
}

// apiServiceDesc is the API's service description with each method's
// decoding step returning a set-aside unmarshal error as INVALID_ARGUMENT
// (logged here: no interceptor has run yet).
func apiServiceDesc(codec *decodeCodec, log *slog.Logger) *grpc.ServiceDesc {
	desc := ctxcv1.ContextCompilerService_ServiceDesc
	desc.Methods = make([]grpc.MethodDesc, len(ctxcv1.ContextCompilerService_ServiceDesc.Methods))
	for i, m := range ctxcv1.ContextCompilerService_ServiceDesc.Methods {
		handler, method := m.Handler, apiPrefix+m.MethodName
		m.Handler = func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			return handler(srv, ctx, func(v any) error {
				if err := dec(v); err != nil {
					return err
				}
				if err := codec.take(v); err != nil {
					detail := err.Error()
					if i := strings.Index(detail, "proto:"); i >= 0 {
						detail = detail[i:]
					}
					log.InfoContext(ctx, "malformed request refused", "grpc.method", method, "peer.address", peerAddress(ctx), "error", detail)
					return newStatus(codes.InvalidArgument, "the request is not a valid protobuf message of the method's type: "+detail, reasonMalformedRequest, nil)
				}
				return nil
			}, interceptor)
		}
		desc.Methods[i] = m
	}
	return &desc
}
