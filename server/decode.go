package server

import (
	"context"
	"log/slog"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// reasonMalformedRequest is the ErrorInfo reason of a request that is not a
// valid protobuf message of the method's type.
const reasonMalformedRequest = "MALFORMED_REQUEST"

// apiServiceDesc is the API's service description with each method's
// request decoding wrapped: grpc-go answers a message it cannot unmarshal
// (bad wire format, a string that is not UTF-8) with INTERNAL, but the fault
// is the client's, so the client gets INVALID_ARGUMENT. The decoding runs
// before any interceptor, so the refusal is logged here.
func apiServiceDesc(log *slog.Logger) *grpc.ServiceDesc {
	desc := ctxcv1.ContextCompilerService_ServiceDesc
	desc.Methods = make([]grpc.MethodDesc, len(ctxcv1.ContextCompilerService_ServiceDesc.Methods))
	for i, m := range ctxcv1.ContextCompilerService_ServiceDesc.Methods {
		handler, method := m.Handler, apiPrefix+m.MethodName
		m.Handler = func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			return handler(srv, ctx, func(v any) error { return decodeError(ctx, log, method, dec(v)) }, interceptor)
		}
		desc.Methods[i] = m
	}
	return &desc
}

// decodeError turns the INTERNAL status of a request that did not decode
// into INVALID_ARGUMENT. Reading and decoding the client's message is all
// the decoder does, so an INTERNAL from it is the message's fault.
func decodeError(ctx context.Context, log *slog.Logger, method string, err error) error {
	st, ok := status.FromError(err)
	if err == nil || !ok || st.Code() != codes.Internal {
		return err
	}
	detail := st.Message()
	if i := strings.LastIndex(detail, ": proto:"); i >= 0 {
		detail = detail[i+2:] // grpc-go's own prefix says nothing to the client
	}
	log.InfoContext(ctx, "malformed request refused", "grpc.method", method, "peer.address", peerAddress(ctx), "error", detail)
	return newStatus(codes.InvalidArgument, "the request is not a valid protobuf message of the method's type: "+detail, reasonMalformedRequest, nil)
}
