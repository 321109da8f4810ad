package service

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/contextcompiler/ctxc/internal/adapter"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/auth"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Limits bound what the gRPC server accepts and how long it works on it.
// Each has a flag, a CTXC_* variable and a YAML key (docs/running-safely.md):
// the yaml tags are the keys of the config file, which embeds Limits
// (server.Config). DefaultLimits are safe for a sidecar on loopback.
type Limits struct {
	// MaxConcurrentCalls bounds the API calls being received or worked on.
	// It is checked when a call's headers arrive, before its message is
	// read, so it also bounds the memory of requests being received (at most
	// this many times max_message_bytes); a call over it is refused at once.
	MaxConcurrentCalls int `yaml:"max_concurrent_calls"`
	// MaxInflightBytes bounds the summed size of the requests being worked
	// on; a call that would pass it waits up to MaxQueueWait in arrival
	// order, then is refused. At least the message limit, so every request
	// that may be sent fits alone.
	MaxInflightBytes int64 `yaml:"max_inflight_bytes"`
	// MaxQueueWait is how long a call may wait for room under MaxInflightBytes
	// (or under MaxUnreadBytesPerConnection).
	MaxQueueWait time.Duration `yaml:"max_queue_wait"`
	// MaxUnreadBytesPerConnection bounds the reply bytes queued on one
	// connection that its client has not read yet; past it, the
	// connection's next call waits up to MaxQueueWait for the client to
	// read, then is refused (0: no bound). Unread replies hold their bytes
	// of MaxInflightBytes until written, so a client that never reads holds
	// at most this much of it per connection.
	MaxUnreadBytesPerConnection int64 `yaml:"max_unread_bytes_per_connection"`
	// MaxConcurrentStreams bounds the calls in flight on one connection
	// (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS; clients queue the rest).
	MaxConcurrentStreams int `yaml:"max_concurrent_streams"`
	// MaxConnections bounds open gRPC connections. When all are taken, a
	// newcomer takes the slot of the oldest connection that has made no
	// authenticated API call (connslots.go); if there is none, it waits.
	MaxConnections int `yaml:"max_connections"`
	// MaxConnectionsPerAddress bounds the open connections of one remote IP
	// address (0: no bound); more are closed as they are accepted, so that
	// one client cannot take every slot of MaxConnections.
	MaxConnectionsPerAddress int `yaml:"max_connections_per_address"`
	// DefaultCallTimeout is the deadline of a call that sets none;
	// MaxCallTimeout caps the deadline a client sets.
	DefaultCallTimeout time.Duration `yaml:"default_call_timeout"`
	MaxCallTimeout     time.Duration `yaml:"max_call_timeout"`
	// HandshakeTimeout bounds a new connection's TLS and HTTP/2 handshake.
	HandshakeTimeout time.Duration `yaml:"handshake_timeout"`
	// KeepaliveMinTime is the shortest interval between client pings; a
	// client pinging more often is sent GOAWAY ("too_many_pings").
	KeepaliveMinTime time.Duration `yaml:"keepalive_min_time"`
	// MaxConnectionIdle closes a connection without calls for this long;
	// MaxConnectionAge closes any connection after this long (clients
	// reconnect, which spreads them over replicas), letting its calls run
	// for up to MaxCallTimeout more. 0 means no limit.
	MaxConnectionIdle time.Duration `yaml:"max_connection_idle"`
	MaxConnectionAge  time.Duration `yaml:"max_connection_age"`
	// MaxHeaderBytes bounds a call's header list (metadata).
	MaxHeaderBytes int `yaml:"max_header_bytes"`
}

// DefaultLimits are the limits of a server that sets none.
func DefaultLimits() Limits {
	return Limits{
		MaxConcurrentCalls:          64,
		MaxInflightBytes:            4 * DefaultMaxMessageBytes,
		MaxQueueWait:                time.Second,
		MaxUnreadBytesPerConnection: DefaultMaxMessageBytes,
		MaxConcurrentStreams:        100,
		MaxConnections:              1000,
		MaxConnectionsPerAddress:    100,
		DefaultCallTimeout:          time.Minute,
		MaxCallTimeout:              5 * time.Minute,
		HandshakeTimeout:            10 * time.Second,
		KeepaliveMinTime:            10 * time.Second,
		MaxConnectionIdle:           5 * time.Minute,
		MaxConnectionAge:            0,
		MaxHeaderBytes:              64 << 10,
	}
}

// RetryDelay is the RetryInfo hint of a call refused because the server is busy.
const RetryDelay = time.Second

// ReasonOverloaded is the ErrorInfo reason of a call refused by admission
// control (RESOURCE_EXHAUSTED, with a RetryInfo).
const ReasonOverloaded = "OVERLOADED"

// The limits admission control refuses calls for, named by their
// configuration keys (the ErrorInfo's limit, the metrics' limit label).
const (
	limitConcurrentCalls = "max_concurrent_calls"
	limitInflightBytes   = "max_inflight_bytes"
	limitUnreadBytes     = "max_unread_bytes_per_connection"
)

// AdmissionLimits are the limits admission control refuses calls for, by
// their configuration keys: every limit an AdmissionObserver is told of.
func AdmissionLimits() []string {
	return []string{limitConcurrentCalls, limitInflightBytes, limitUnreadBytes}
}

var (
	healthPrefix = "/" + healthpb.Health_ServiceDesc.ServiceName + "/"
)

// Metadata the gateway sets on the calls it makes for HTTP clients; the
// server believes it only on the gateway's in-process connection.
const (
	mdClientAddress = "ctxc-gateway-client-address"
	mdClientCN      = "ctxc-gateway-client-cn"
	mdGatewayPrefix = "ctxc-gateway-"
)

// admission authenticates calls and keeps the server within its limits.
type admission struct {
	maxMessageBytes int
	tokens          *Tokens // nil: no bearer tokens
	mtls            bool
	limits          Limits
	calls           atomic.Int64
	inflight        *inflightBytes
	log             *slog.Logger
	observer        AdmissionObserver
	refusals        *refusals
	idle            *idleRelease // returns memory to the system when the server goes idle
	// quotas are the callers' own limits (quota.go); nil: none.
	quotas *callerQuotas
}

func newAdmission(tokens *Tokens, mtls bool, limits Limits, maxMessageBytes int, log *slog.Logger, observer AdmissionObserver) *admission {
	if observer == nil {
		observer = unobserved{}
	}
	return &admission{idle: newIdleRelease(), maxMessageBytes: maxMessageBytes, tokens: tokens, mtls: mtls, limits: limits, inflight: newInflightBytes(limits.MaxInflightBytes), log: log, observer: observer}
}

// unobserved is the AdmissionObserver of a transport without metrics.
type unobserved struct{}

func (unobserved) Rejected(string, string) {}
func (unobserved) AddInflightBytes(int64)  {}

// tap runs when a call's headers arrive, before its message is read: health
// passes; anything else must authenticate; API calls must fit under
// MaxConcurrentCalls. Refusing here costs the server nothing of the message.
// It runs on the connection's reader goroutine, so it never waits.
func (a *admission) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	if strings.HasPrefix(info.FullMethodName, healthPrefix) {
		return ctx, nil
	}
	ctx = fromGateway(ctx, info.Header)
	ctx, ok := a.authenticate(ctx)
	if !ok {
		port := "grpc"
		if gatewayCall(ctx) {
			port = "http" // the gateway's and the proxy's calls
		}
		a.refusals.refused(ctx, port, adapter.PeerAddress(ctx), info.FullMethodName)
		return nil, status.Error(codes.Unauthenticated, "unauthenticated")
	}
	if !strings.HasPrefix(info.FullMethodName, adapter.MethodPrefix) {
		return ctx, nil // reflection
	}
	provenCall(ctx)
	// The caller's quota first: a caller at it takes nothing shared (quota.go).
	leave, err := a.quotas.enter(ctx, info.FullMethodName)
	if err != nil {
		return nil, err
	}
	if n := a.calls.Add(1); n > int64(a.limits.MaxConcurrentCalls) {
		a.calls.Add(-1)
		leave()
		a.log.WarnContext(ctx, "call refused: server busy", "method", info.FullMethodName, "limit", limitConcurrentCalls, "peer.address", adapter.PeerAddress(ctx))
		a.observer.Rejected(info.FullMethodName, limitConcurrentCalls)
		return nil, overloaded(limitConcurrentCalls, int64(a.limits.MaxConcurrentCalls))
	}
	// The stream's context ends when the call does, whichever way.
	context.AfterFunc(ctx, func() { a.calls.Add(-1); leave() })
	return ctx, nil
}

// authenticate finds the caller: the bearer token's name when the server has
// tokens, else the client certificate's name with mTLS, else nobody (and
// that is fine).
func (a *admission) authenticate(ctx context.Context) (context.Context, bool) {
	if a.tokens != nil {
		token, err := auth.AuthFromMD(ctx, "bearer")
		if err != nil {
			return ctx, false
		}
		name, ok := a.tokens.Authenticate(token)
		if !ok {
			return ctx, false
		}
		return adapter.WithCaller(ctx, name), true
	}
	if a.mtls {
		if name, ok := certificateCaller(ctx); ok {
			return adapter.WithCaller(ctx, name), true
		}
		if name := gatewayValue(ctx, mdClientCN); name != "" {
			return adapter.WithCaller(ctx, name), true
		}
	}
	return ctx, true
}

// fromGateway makes the HTTP client the peer of a call the gateway made for
// it, so that logs and spans name the client, not the gateway.
func fromGateway(ctx context.Context, md metadata.MD) context.Context {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return ctx
	}
	if _, inProcess := p.AuthInfo.(inProcessAuthInfo); !inProcess {
		return ctx
	}
	addr := last(md.Get(mdClientAddress))
	if addr == "" {
		return ctx
	}
	client := *p
	client.Addr = gatewayClientAddr(addr)
	return peer.NewContext(ctx, &client)
}

// gatewayCall reports whether the call came through the gateway (the HTTP
// port's API, inspector or proxy).
func gatewayCall(ctx context.Context) bool {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return false
	}
	_, inProcess := p.AuthInfo.(inProcessAuthInfo)
	return inProcess
}

// gatewayValue is a value the gateway set, or "" on any other connection.
func gatewayValue(ctx context.Context, key string) string {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return ""
	}
	if _, inProcess := p.AuthInfo.(inProcessAuthInfo); !inProcess {
		return ""
	}
	return last(metadata.ValueFromIncomingContext(ctx, key))
}

func last(values []string) string {
	if len(values) == 0 {
		return ""
	}
	return values[len(values)-1]
}

// gatewayClientAddr is an HTTP client's address as a net.Addr.
type gatewayClientAddr string

func (a gatewayClientAddr) Network() string { return "http" }
func (a gatewayClientAddr) String() string  { return string(a) }

var _ net.Addr = gatewayClientAddr("")

// overloaded is the status of a call refused for a limit: RESOURCE_EXHAUSTED
// with the limit named and a retry hint.
func overloaded(limit string, value int64) error {
	st := status.New(codes.ResourceExhausted, fmt.Sprintf("server busy (%s %d reached); retry after %s", limit, value, RetryDelay))
	withDetails, err := st.WithDetails(
		&errdetails.ErrorInfo{Reason: ReasonOverloaded, Domain: adapter.ErrorDomain, Metadata: map[string]string{"limit": limit}},
		&errdetails.RetryInfo{RetryDelay: durationpb.New(RetryDelay)})
	if err != nil {
		return st.Err()
	}
	return withDetails.Err()
}

// isAPI reports whether a method is one of ctxc's own (not health or reflection).
func isAPI(fullMethod string) bool { return strings.HasPrefix(fullMethod, adapter.MethodPrefix) }

// unaryInflight admits an API call once its connection has read enough of
// its earlier replies (MaxUnreadBytesPerConnection) and its request fits
// under MaxInflightBytes, waiting up to MaxQueueWait for each. The call's
// bytes pass to its connection's reply ledger with its reply (unread.go).
func (a *admission) unaryInflight(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if !isAPI(info.FullMethod) {
		return handler(ctx, req)
	}
	ledger := ledgerOf(ctx)
	if limit := a.limits.MaxUnreadBytesPerConnection; ledger != nil && limit > 0 && !ledger.waitUnread(ctx, limit, a.limits.MaxQueueWait) {
		return nil, a.unreadRefusal(ctx, info.FullMethod, "call refused")
	}
	n := int64(1)
	if m, ok := req.(proto.Message); ok {
		n = max(n, int64(proto.Size(m)))
	}
	n = min(n, a.limits.MaxInflightBytes)
	if err := a.acquireInflight(ctx, info.FullMethod, n, false); err != nil {
		if ctx.Err() != nil {
			return nil, adapter.ToStatus(ctx, a.log, info.FullMethod, err)
		}
		return nil, err
	}
	hold := &inflightHold{a: a, method: info.FullMethod, held: n}
	ctx = adapter.WithInflightBytes(ctx, hold)
	resp, err := handler(ctx, req)
	if err == nil && ledger != nil {
		resp, err = a.owe(ctx, ledger, hold, resp)
	}
	a.releaseInflight(hold.held)
	return resp, err
}

// owe passes a reply from the call to its connection's ledger, with the
// call's in-flight bytes (and more, up to the reply's size, when there is
// room: the reply is made, so waiting for room could only deadlock with the
// calls queued behind it). A connection that already owes its share waits
// up to MaxQueueWait for its client to read; otherwise the reply is dropped.
func (a *admission) owe(ctx context.Context, ledger *replyLedger, hold *inflightHold, resp any) (any, error) {
	m, ok := resp.(proto.Message)
	if !ok {
		return resp, nil
	}
	size := int64(proto.Size(m)) + grpcMessageHeaderBytes
	if size-grpcMessageHeaderBytes > int64(a.maxMessageBytes) {
		return resp, nil // gRPC refuses to send it (RESOURCE_EXHAUSTED): nothing to owe
	}
	if limit := a.limits.MaxUnreadBytesPerConnection; limit > 0 && !ledger.waitUnread(ctx, max(limit-size, 0), a.limits.MaxQueueWait) {
		return nil, a.unreadRefusal(ctx, hold.method, "reply dropped")
	}
	hold.mu.Lock()
	defer hold.mu.Unlock()
	take := min(hold.held, size)
	if extra := size - take; extra > 0 && a.inflight.tryAcquire(extra) {
		a.inflightAdded(extra)
		hold.held += extra
		take = size
	}
	hold.held -= take
	seq := ledger.owe(size, take)
	if cell := replyCellOf(ctx); cell != nil {
		cell.owed(ledger, seq, size)
	}
	return resp, nil
}

// unreadRefusal is the error of a call whose connection did not read its
// replies in time (what: what became of the call), or the call's own end.
func (a *admission) unreadRefusal(ctx context.Context, method, what string) error {
	if ctx.Err() != nil {
		return adapter.ToStatus(ctx, a.log, method, ctx.Err())
	}
	a.log.WarnContext(ctx, what+": the connection has not read its replies", "method", method, "limit", limitUnreadBytes, "peer.address", adapter.PeerAddress(ctx))
	a.observer.Rejected(method, limitUnreadBytes)
	return overloaded(limitUnreadBytes, a.limits.MaxUnreadBytesPerConnection)
}

// grpcMessageHeaderBytes frames every gRPC message (compression flag, length).
const grpcMessageHeaderBytes = 5

// inflightAdded records n more (or, negative, fewer) bytes in flight.
func (a *admission) inflightAdded(n int64) {
	a.observer.AddInflightBytes(n)
	a.idle.added(n)
}

// releaseInflight gives n bytes of MaxInflightBytes back.
func (a *admission) releaseInflight(n int64) {
	if n <= 0 {
		return
	}
	a.inflight.release(n)
	a.inflightAdded(-n)
}

// inflightHold is what a call holds of MaxInflightBytes: its request's size,
// and more when the request turns out to make more (a compressed state blob
// decompresses to many times its size) before that is made.
type inflightHold struct {
	a      *admission
	method string
	mu     sync.Mutex
	held   int64
}

var _ adapter.InflightBytes = (*inflightHold)(nil)

// Hold makes the call hold at least total bytes of MaxInflightBytes,
// waiting up to MaxQueueWait for room as admission does, and refusing as it
// does (OVERLOADED) when there is none; a total over MaxInflightBytes is an
// *adapter.NeverFitsError.
func (h *inflightHold) Hold(ctx context.Context, total int64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	a := h.a
	if total > a.limits.MaxInflightBytes {
		return &adapter.NeverFitsError{Need: total, Limit: a.limits.MaxInflightBytes}
	}
	extra := total - h.held
	if extra <= 0 {
		return nil
	}
	// The call keeps what it holds while it waits for more: what it holds
	// is made (a decoded state), and given back it would let other calls
	// make as much again, unaccounted. It waits ahead of calls not yet
	// admitted, which hold nothing yet; two calls that each wait for more
	// wait at most MaxQueueWait, then one is refused and the other goes on.
	if err := a.acquireInflight(ctx, h.method, extra, true); err != nil {
		return err
	}
	h.held = total
	return nil
}

// Grow makes the call hold n bytes more of MaxInflightBytes, as Hold does.
func (h *inflightHold) Grow(ctx context.Context, n int64) error {
	if n <= 0 {
		return nil
	}
	h.mu.Lock()
	total := h.held + n
	h.mu.Unlock()
	return h.Hold(ctx, total)
}

// Limit is MaxInflightBytes.
func (h *inflightHold) Limit() int64 { return h.a.limits.MaxInflightBytes }

// acquireInflight takes n bytes of MaxInflightBytes for a call to method,
// waiting up to MaxQueueWait in arrival order (small calls excepted:
// inflight.go; a call that already holds bytes, first, waits ahead of those
// that hold none): the context's error when the call ends first, OVERLOADED
// when the wait does.
func (a *admission) acquireInflight(ctx context.Context, method string, n int64, first bool) error {
	if !a.inflight.tryAcquire(n) {
		wait, cancel := context.WithTimeout(ctx, a.limits.MaxQueueWait)
		err := a.inflight.acquire(wait, n, first)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			a.observer.Rejected(method, limitInflightBytes)
			return overloaded(limitInflightBytes, a.limits.MaxInflightBytes)
		}
	}
	a.inflightAdded(n)
	return nil
}

// unaryCallContext gives an API call its deadline (the default when the
// client set none, capped at the maximum) and names the caller in its span.
func (a *admission) unaryCallContext(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if caller, ok := adapter.CallerFromContext(ctx); ok {
		trace.SpanFromContext(ctx).SetAttributes(attribute.String("enduser.id", caller))
	}
	if !isAPI(info.FullMethod) {
		return handler(ctx, req)
	}
	timeout := a.limits.DefaultCallTimeout
	if deadline, ok := ctx.Deadline(); ok {
		timeout = min(time.Until(deadline), a.limits.MaxCallTimeout)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return handler(ctx, req)
}
