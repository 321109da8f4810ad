package service

import (
	"context"
	"net"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/proto"

	"github.com/contextcompiler/ctxc/internal/adapter"
)

// The proxy compiles every request it forwards. Over the in-process
// connection a call crosses HTTP/2 framing and several goroutines each way,
// which took as much wall time as the compile of a 100-message body (see
// docs/ARCHITECTURE.md, "The proxy"). A direct call runs, in the caller's
// goroutine, what a network call runs: the tap (authentication and the
// call limit), a server span, the interceptors (call context, metrics, the
// call log, in-flight bytes, recovery) and the method's handler, with the
// message sizes checked as the transport checks them; and it stops with
// the server as network calls do.

// directCalls calls the API's unary methods in this process.
type directCalls struct {
	handlers map[string]grpc.MethodHandler // by full method name
	srv      any
	tap      tap.ServerInHandle
	chain    grpc.UnaryServerInterceptor
	tracer   trace.Tracer
	maxRecv  int
	maxSend  int

	mu       sync.Mutex
	stopping bool
	running  sync.WaitGroup
	// cancelled ends when the server stops without grace; every running
	// call's context ends with it.
	cancelled context.Context
	cancelAll context.CancelFunc
}

func newDirectCalls(desc *grpc.ServiceDesc, srv any, tapHandle tap.ServerInHandle, unary []grpc.UnaryServerInterceptor,
	tp trace.TracerProvider, maxMessageBytes int) *directCalls {
	d := &directCalls{handlers: map[string]grpc.MethodHandler{}, srv: srv, tap: tapHandle, chain: chainUnary(unary),
		tracer: tp.Tracer("github.com/contextcompiler/ctxc/internal/service"), maxRecv: maxMessageBytes, maxSend: maxMessageBytes}
	for _, m := range desc.Methods {
		d.handlers["/"+desc.ServiceName+"/"+m.MethodName] = m.Handler
	}
	d.cancelled, d.cancelAll = context.WithCancel(context.Background())
	return d
}

// chainUnary is interceptors as one, the first outermost, as
// grpc.ChainUnaryInterceptor makes them.
func chainUnary(interceptors []grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		next := handler
		for i := len(interceptors) - 1; i >= 0; i-- {
			interceptor, inner := interceptors[i], next
			next = func(ctx context.Context, req any) (any, error) { return interceptor(ctx, req, info, inner) }
		}
		return next(ctx, req)
	}
}

// begin admits a call unless the server is stopping.
func (d *directCalls) begin() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopping {
		return false
	}
	d.running.Add(1)
	return true
}

// gracefulStop refuses new calls and waits for the running ones.
func (d *directCalls) gracefulStop() {
	d.mu.Lock()
	d.stopping = true
	d.mu.Unlock()
	d.running.Wait()
}

// stop refuses new calls and cancels the running ones.
func (d *directCalls) stop() {
	d.mu.Lock()
	d.stopping = true
	d.mu.Unlock()
	d.cancelAll()
}

// directAddr is the peer address of a direct call that does not say whose
// it is (the proxy and the gateway say so in metadata).
type directAddr struct{}

func (directAddr) Network() string { return "inprocess" }
func (directAddr) String() string  { return "inprocess" }

var _ net.Addr = directAddr{}

// invoke calls method with args and fills reply, as a unary call over the
// network would: the outgoing metadata of ctx arrives as incoming metadata,
// and the peer is the in-process one, whose gateway metadata is trusted.
func (d *directCalls) invoke(ctx context.Context, method string, args, reply any) error {
	handler, ok := d.handlers[method]
	if !ok {
		return status.Errorf(grpccodes.Unimplemented, "unknown method %s", method)
	}
	in, inOK := args.(proto.Message)
	out, outOK := reply.(proto.Message)
	if !inOK || !outOK {
		return status.Errorf(grpccodes.Internal, "direct call of %s: %T and %T are not protobuf messages", method, args, reply)
	}
	if size := proto.Size(in); size > d.maxRecv {
		return status.Errorf(grpccodes.ResourceExhausted, "grpc: received message larger than max (%d vs. %d)", size, d.maxRecv)
	}
	if err := ctx.Err(); err != nil { // as a client refuses to send
		return status.FromContextError(err).Err()
	}
	if !d.begin() {
		return status.Error(grpccodes.Unavailable, "the server is stopping")
	}
	defer d.running.Done()
	ctx, cancel := context.WithCancel(adapter.WithDirectCall(ctx))
	defer cancel()
	defer context.AfterFunc(d.cancelled, cancel)()

	md, _ := metadata.FromOutgoingContext(ctx)
	md = md.Copy()
	ctx = metadata.NewOutgoingContext(ctx, nil)
	ctx = metadata.NewIncomingContext(ctx, md)
	ctx = peer.NewContext(ctx, &peer.Peer{Addr: directAddr{},
		AuthInfo: inProcessAuthInfo{credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}}})
	ctx, err := d.tap(ctx, &tap.Info{FullMethodName: method, Header: md})
	if err != nil {
		return err
	}
	service, name, _ := strings.Cut(strings.TrimPrefix(method, "/"), "/")
	ctx, span := d.tracer.Start(ctx, strings.TrimPrefix(method, "/"), trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("rpc.system", "grpc"), attribute.String("rpc.service", service), attribute.String("rpc.method", name)))
	defer span.End()

	resp, err := handler(d.srv, ctx, func(v any) error {
		proto.Merge(v.(proto.Message), in)
		return nil
	}, d.chain)
	if err == nil {
		if size := proto.Size(resp.(proto.Message)); size > d.maxSend {
			err = status.Errorf(grpccodes.ResourceExhausted, "grpc: trying to send message larger than max (%d vs. %d)", size, d.maxSend)
		}
	}
	st := status.Convert(err)
	span.SetAttributes(attribute.Int64("rpc.grpc.status_code", int64(st.Code())))
	if err != nil {
		span.SetStatus(codes.Error, st.Message())
		return st.Err()
	}
	proto.Reset(out)
	proto.Merge(out, resp.(proto.Message))
	return nil
}

// directConn is a grpc.ClientConnInterface over directCalls.
type directConn struct{ d *directCalls }

func (c directConn) Invoke(ctx context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	return c.d.invoke(ctx, method, args, reply)
}

func (c directConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Error(grpccodes.Unimplemented, "a direct call serves unary methods only")
}

// DirectConn calls the API's unary methods in this process, without a
// connection, through the same tap, interceptors and limits as a call over
// the network; the proxy compiles through it.
func (t *Transport) DirectConn() grpc.ClientConnInterface { return directConn{t.direct} }
