package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/textproto"
	"strconv"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/policies"
)

// Gateway serves the API as HTTP/JSON: every RPC as
// POST /ctxc.v1.ContextCompilerService/<Method> with the request as the JSON
// body, and the gRPC health status at GET /healthz.
//
// It calls the gRPC server over loopback instead of the service in process, so
// an HTTP request passes the same interceptors (call log, metrics, panic
// recovery, tracing), message limits and error mapping as a gRPC call; the price
// is one local round trip and a protobuf encode and decode per call.
type Gateway struct {
	http *http.Server
	conn *grpc.ClientConn
	log  *slog.Logger
}

// NewGateway builds the gateway for the gRPC server listening on grpcAddr.
// Requests larger than maxMessageBytes are answered 413 before they are decoded.
func NewGateway(grpcAddr net.Addr, maxMessageBytes int, log *slog.Logger) (*Gateway, error) {
	conn, err := grpc.NewClient(LoopbackTarget(grpcAddr),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageBytes), grpc.MaxCallSendMsgSize(maxMessageBytes)))
	if err != nil {
		return nil, fmt.Errorf("http gateway: %w", err)
	}
	marshaler := &runtime.JSONPb{
		// lowerCamelCase names and no zero values, as grpcurl prints; protojson
		// accepts proto names too. Unknown fields are errors, so a typo is not
		// silently ignored.
		MarshalOptions:   protojson.MarshalOptions{EmitUnpopulated: false, UseProtoNames: false},
		UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
	}
	mux := runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, marshaler),
		runtime.WithErrorHandler(errorHandler),
		runtime.WithIncomingHeaderMatcher(headerMatcher),
		runtime.WithHealthzEndpoint(healthpb.NewHealthClient(conn)),
	)
	if err := ctxcv1.RegisterContextCompilerServiceHandler(context.Background(), mux, conn); err != nil {
		conn.Close()
		return nil, fmt.Errorf("http gateway: %w", err)
	}
	handler := limitBody(mux, marshaler, int64(maxMessageBytes))
	return &Gateway{
		http: &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second},
		conn: conn,
		log:  log,
	}, nil
}

// Serve serves HTTP on lis until Shutdown or Close.
func (g *Gateway) Serve(lis net.Listener) {
	if err := g.http.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
		g.log.Error("http server", "error", err.Error())
	}
}

// Shutdown stops accepting requests and gives those in flight until deadline
// to finish; whatever still runs then is cut off.
func (g *Gateway) Shutdown(deadline time.Time) {
	g.log.Info("shutting down http", "grace_period", time.Until(deadline).Round(time.Millisecond).String())
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if err := g.http.Shutdown(ctx); err != nil {
		g.log.Warn("grace period over; closing the http requests still running")
		_ = g.http.Close()
	}
}

// Close releases the loopback connection; call it after the gRPC server stopped.
func (g *Gateway) Close() {
	_ = g.http.Close()
	_ = g.conn.Close()
}

// LoopbackTarget is the gRPC target that reaches addr from this process, with
// a wildcard host replaced by loopback.
func LoopbackTarget(addr net.Addr) string {
	if addr.Network() == "unix" {
		return DialTarget("unix:" + addr.String())
	}
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		return "passthrough:///" + net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
	}
	return "passthrough:///" + addr.String()
}

// traceHeaders are forwarded to the gRPC server as they are, so an HTTP
// caller's trace continues in the server's spans.
var traceHeaders = map[string]bool{"Traceparent": true, "Tracestate": true, "Baggage": true}

func headerMatcher(key string) (string, bool) {
	if canonical := textproto.CanonicalMIMEHeaderKey(key); traceHeaders[canonical] {
		return canonical, true
	}
	return runtime.DefaultHeaderMatcher(key)
}

// limitedBody is a request body capped by http.MaxBytesReader that remembers
// whether the cap was hit: the gateway turns every body read error into
// INVALID_ARGUMENT, and errorHandler makes that a 413 again.
type limitedBody struct {
	inner    io.ReadCloser
	limit    int64
	exceeded bool
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.inner.Read(p)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		b.exceeded = true
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.inner.Close() }

type limitedBodyKey struct{}

// limitBody refuses bodies larger than limit bytes with 413 and a
// RESOURCE_EXHAUSTED status: at once when Content-Length says so, otherwise as
// soon as reading passes the limit.
func limitBody(mux *runtime.ServeMux, marshaler runtime.Marshaler, limit int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			runtime.DefaultHTTPErrorHandler(r.Context(), mux, marshaler, w, r, bodyTooLarge(limit))
			return
		}
		body := &limitedBody{inner: http.MaxBytesReader(w, r.Body, limit), limit: limit}
		r.Body = body
		mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), limitedBodyKey{}, body)))
	})
}

// bodyTooLarge is the answer to a body over the limit: HTTP 413 with the
// status a gRPC client gets for an over-size message, plus an ErrorInfo.
func bodyTooLarge(limit int64) error {
	// WithDetails fails only for codes.OK.
	st, _ := status.New(codes.ResourceExhausted, fmt.Sprintf("request body larger than max_message_bytes (%d bytes)", limit)).
		WithDetails(&errdetails.ErrorInfo{Reason: policies.ReasonLimitExceeded, Domain: ErrorDomain,
			Metadata: map[string]string{"field": "body", "limit": strconv.FormatInt(limit, 10)}})
	return &runtime.HTTPStatusError{HTTPStatus: http.StatusRequestEntityTooLarge, Err: st.Err()}
}

// errorHandler writes the gateway's standard JSON status (code, message,
// details) with the gateway's HTTP status for the gRPC code, except for a body
// cut off by the size limit, which is 413.
func errorHandler(ctx context.Context, mux *runtime.ServeMux, marshaler runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	if body, ok := ctx.Value(limitedBodyKey{}).(*limitedBody); ok && body.exceeded {
		err = bodyTooLarge(body.limit)
	}
	runtime.DefaultHTTPErrorHandler(ctx, mux, marshaler, w, r, err)
}
