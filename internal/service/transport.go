package service

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/contextcompiler/ctxc/internal/adapter"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/selector"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/test/bufconn"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/compiler"
)

// DefaultMaxMessageBytes bounds a request or response message.
const DefaultMaxMessageBytes = compiler.DefaultMaxMessageBytes

// DefaultGracePeriod is how long shutdown waits for in-flight calls.
const DefaultGracePeriod = 10 * time.Second

// TransportConfig configures the gRPC server around the service.
type TransportConfig struct {
	// MaxMessageBytes bounds received and sent messages; a larger request is
	// refused with RESOURCE_EXHAUSTED before it is decoded. DefaultMaxMessageBytes when 0.
	MaxMessageBytes int
	// Reflection registers the server reflection service (for grpcurl).
	Reflection bool
	// GracePeriod bounds how long Serve waits for in-flight calls after its
	// context ends; DefaultGracePeriod when 0.
	GracePeriod time.Duration
	// Logger logs every finished call and recovered panics; slog.Default() when nil.
	Logger *slog.Logger
	// TracerProvider receives one server span per call; no-op when nil.
	TracerProvider trace.TracerProvider
	// MetricsRegisterer, when set, gets the gRPC server metrics (Prometheus).
	MetricsRegisterer prometheus.Registerer
	// MetricsExemplar, when set, links a call's observation to its trace
	// (metrics.TraceExemplar), so that a slow bucket leads to the call.
	MetricsExemplar func(context.Context) prometheus.Labels
	// TLS, when set, is required of every network connection (and a client
	// certificate too when it has client CAs).
	TLS *TLS
	// Tokens, when set, authenticates every call but health's.
	Tokens *Tokens
	// Limits bound calls, bytes, connections and time; DefaultLimits() when zero.
	Limits Limits
	// DrainDelay is how long, after shutdown begins, health says NOT_SERVING
	// while calls are still accepted, so load balancers stop routing here
	// before the port closes.
	DrainDelay time.Duration
	// Admission, when set, is told what admission control refuses and how
	// many request bytes are in flight (*metrics.Admission).
	Admission AdmissionObserver
	// Refusals, when set, is told of every request refused for want of
	// credentials (*metrics.Admission).
	Refusals RefusalObserver
	// Quotas are each caller's own limits (quota.go); zero: none.
	Quotas Quotas
	// QuotaObserver, when set, is told of every call refused at its
	// caller's quota and of each caller's calls in flight (*metrics.Admission).
	QuotaObserver QuotaObserver
}

// AdmissionObserver is what admission control reports to, for metrics.
type AdmissionObserver interface {
	// Rejected counts a call to method (its full gRPC name) refused because
	// limit (one of AdmissionLimits) was reached.
	Rejected(method, limit string)
	// AddInflightBytes adds delta to the bytes of the requests admitted and
	// still being worked on: a request's size when it is admitted, minus
	// that when it ends.
	AddInflightBytes(delta int64)
}

// Transport is the gRPC server of the service with its health service.
type Transport struct {
	grpc      *grpc.Server
	health    *health.Server
	grace     time.Duration
	log       *slog.Logger
	inProcess inProcessListener
	direct    *directCalls
	refusals  *refusals
	// maxConnections bounds the connections of the listener Serve is given.
	maxConnections           int
	maxConnectionsPerAddress int
	drainDelay               time.Duration
	handshakeTimeout         time.Duration  // how long a connection over its address's share is held
	replies                  unreadListener // wraps network connections with their reply ledgers
	drainOnce                sync.Once
	drainedAt                time.Time
	// stopBy is a shutdown deadline in Unix nanoseconds set by StopBy, 0 if none.
	stopBy atomic.Int64
}

// healthServices are the names health reports on: the whole server ("") and the API.
var healthServices = []string{"", ctxcv1.ContextCompilerService_ServiceDesc.ServiceName}

// NewTransport builds the gRPC server. Health starts NOT_SERVING; call
// SetServing once everything the service needs is loaded.
func NewTransport(svc ctxcv1.ContextCompilerServiceServer, cfg TransportConfig) *Transport {
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if cfg.GracePeriod <= 0 {
		cfg.GracePeriod = DefaultGracePeriod
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.TracerProvider == nil {
		cfg.TracerProvider = noop.NewTracerProvider()
	}
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits()
	}
	log := cfg.Logger
	refused := newRefusals(log, cfg.Refusals)
	adm := newAdmission(cfg.Tokens, cfg.TLS != nil && cfg.TLS.MutualTLS(), cfg.Limits, cfg.MaxMessageBytes, log, cfg.Admission)
	adm.refusals = refused
	adm.quotas = newCallerQuotas(cfg.Quotas, log, cfg.QuotaObserver)
	// Before metrics and the call log, so that they see the caller, the
	// deadline and, for the gateway's calls, the HTTP client as the peer.
	unary := []grpc.UnaryServerInterceptor{adm.unaryCallContext}

	var stream []grpc.StreamServerInterceptor
	var metrics *grpcprom.ServerMetrics
	if cfg.MetricsRegisterer != nil {
		metrics = grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram())
		cfg.MetricsRegisterer.MustRegister(metrics)
		var opts []grpcprom.Option
		if cfg.MetricsExemplar != nil {
			opts = append(opts, grpcprom.WithExemplarFromContext(cfg.MetricsExemplar))
		}
		unary = append(unary, metrics.UnaryServerInterceptor(opts...))
		stream = append(stream, metrics.StreamServerInterceptor(opts...))
	}
	// Recovery sits inside logging so a recovered panic is logged as the INTERNAL it becomes.
	callLogger := interceptorLogger(log)
	logOpts := []logging.Option{logging.WithLogOnEvents(logging.FinishCall), logging.WithFieldsFromContext(callerField)}
	recoverOpts := []recovery.Option{recovery.WithRecoveryHandlerContext(func(ctx context.Context, p any) error {
		log.ErrorContext(ctx, "panic in handler", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		return adapter.InternalStatus()
	})}
	// Health probes come every few seconds from orchestrators; logging them buries the calls that matter.
	notHealth := selector.MatchFunc(func(_ context.Context, call interceptors.CallMeta) bool {
		return call.Service != healthpb.Health_ServiceDesc.ServiceName
	})
	unary = append(unary,
		selector.UnaryServerInterceptor(logging.UnaryServerInterceptor(callLogger, logOpts...), notHealth),
		adm.quotas.unary, // before the shared queue for max_inflight_bytes
		adm.unaryInflight,
		recovery.UnaryServerInterceptor(recoverOpts...))
	stream = append(stream,
		selector.StreamServerInterceptor(logging.StreamServerInterceptor(callLogger, logOpts...), notHealth),
		recovery.StreamServerInterceptor(recoverOpts...))

	lim := cfg.Limits
	codec := adapter.NewCodec()
	gs := grpc.NewServer(
		grpc.ForceServerCodecV2(codec),
		grpc.Creds(newServerCredentials(cfg.TLS)),
		grpc.InTapHandle(adm.tap),
		grpc.MaxRecvMsgSize(cfg.MaxMessageBytes),
		grpc.MaxSendMsgSize(cfg.MaxMessageBytes),
		grpc.MaxConcurrentStreams(uint32(lim.MaxConcurrentStreams)),
		grpc.MaxHeaderListSize(uint32(lim.MaxHeaderBytes)),
		grpc.ConnectionTimeout(lim.HandshakeTimeout),
		grpc.StatsHandler(replyStats{}),
		grpc.StatsHandler(otelgrpc.NewServerHandler(
			otelgrpc.WithTracerProvider(cfg.TracerProvider),
			otelgrpc.WithPropagators(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})),
		)),
		grpc.ChainUnaryInterceptor(unary...),
		grpc.ChainStreamInterceptor(stream...),
		// Clients in Python and PHP ping idle connections every 10-30s; a
		// stricter policy answers them with GOAWAY "too_many_pings".
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: lim.KeepaliveMinTime, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionIdle:     lim.MaxConnectionIdle,
			MaxConnectionAge:      lim.MaxConnectionAge,
			MaxConnectionAgeGrace: lim.MaxCallTimeout,
			Time:                  2 * time.Minute,
			Timeout:               20 * time.Second,
		}),
	)
	api := adapter.ServiceDesc(codec, log)
	gs.RegisterService(api, svc)
	hs := health.NewServer()
	for _, name := range healthServices {
		hs.SetServingStatus(name, healthpb.HealthCheckResponse_NOT_SERVING)
	}
	healthpb.RegisterHealthServer(gs, hs)
	if cfg.Reflection {
		reflection.Register(gs)
	}
	if metrics != nil {
		metrics.InitializeMetrics(gs)
	}
	return &Transport{grpc: gs, health: hs, grace: cfg.GracePeriod, log: log,
		direct: newDirectCalls(api, svc, adm.tap, unary, cfg.TracerProvider, cfg.MaxMessageBytes), refusals: refused,
		inProcess: inProcessListener{bufconn.Listen(inProcessBufferBytes)}, maxConnections: lim.MaxConnections,
		maxConnectionsPerAddress: lim.MaxConnectionsPerAddress, handshakeTimeout: lim.HandshakeTimeout, drainDelay: cfg.DrainDelay,
		replies: unreadListener{release: adm.releaseInflight, expiry: lim.MaxCallTimeout}}
}

// callerField adds the authenticated caller to a call's log line.
func callerField(ctx context.Context) logging.Fields {
	if caller, ok := adapter.CallerFromContext(ctx); ok {
		return logging.Fields{"caller", caller}
	}
	return nil
}

// SetServing reports SERVING on health.
func (t *Transport) SetServing() {
	for _, name := range healthServices {
		t.health.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
	}
}

// Drain begins a shutdown: health turns NOT_SERVING at once, and Drain
// returns after the drain delay, during which calls are still accepted and
// served so that load balancers and clients watching health move away
// before the port closes; or earlier, when ctx ends. Calls after the first
// wait out the same delay.
func (t *Transport) Drain(ctx context.Context) {
	t.drainOnce.Do(func() {
		t.health.Shutdown()
		t.drainedAt = time.Now().Add(t.drainDelay)
		if t.drainDelay > 0 {
			t.log.Info("draining: health is NOT_SERVING; still accepting calls", "drain_delay", t.drainDelay.String())
		}
	})
	wait := time.NewTimer(time.Until(t.drainedAt))
	defer wait.Stop()
	select {
	case <-wait.C:
	case <-ctx.Done():
	}
}

// StopBy makes the shutdown that follows end by deadline at the latest, for
// a caller that spends part of the grace period before Serve's context ends
// (draining an HTTP gateway first). Call it before that context ends.
func (t *Transport) StopBy(deadline time.Time) { t.stopBy.Store(deadline.UnixNano()) }

// Serve serves on lis (and on the gateway's in-process listener) until ctx
// ends, then shuts down: health turns NOT_SERVING and calls are still served
// for the drain delay (Drain); then new calls are refused, in-flight calls
// get the grace period to finish, and whatever still runs after it is cut
// off. It returns nil after a shutdown asked for through ctx.
func (t *Transport) Serve(ctx context.Context, lis net.Listener) error {
	lis = LimitPerAddress(lis, t.maxConnectionsPerAddress, t.handshakeTimeout)
	if t.maxConnections > 0 {
		lis = limitConnections(lis, t.maxConnections, t.log)
	}
	replies := t.replies
	replies.Listener = lis
	lis = replies
	served := make(chan error, 1)
	go func() { served <- t.grpc.Serve(lis) }()
	go func() { _ = t.grpc.Serve(t.inProcess) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// A StopBy deadline that falls inside the drain delay cuts it short.
	drain := context.Background()
	if by := t.stopBy.Load(); by != 0 {
		var cancel context.CancelFunc
		drain, cancel = context.WithDeadline(drain, time.Unix(0, by))
		defer cancel()
	}
	t.Drain(drain)
	grace := t.grace
	if by := t.stopBy.Load(); by != 0 {
		grace = max(0, min(grace, time.Until(time.Unix(0, by))))
	}
	t.log.Info("shutting down", "grace_period", grace.String())
	stopped := make(chan struct{})
	go func() {
		t.grpc.GracefulStop()
		t.direct.gracefulStop()
		close(stopped)
	}()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-stopped:
	case <-timer.C:
		t.log.Warn("grace period over; cancelling the calls still running")
		t.grpc.Stop()
		t.direct.stop()
		<-stopped
	}
	if err := <-served; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return err
	}
	return nil
}

// Listen opens a listener for addr: "host:port" for TCP, or "unix:///path" or
// "unix:/path" for a Unix socket. A stale socket file left by a crash is removed.
func Listen(addr string) (net.Listener, error) {
	if path, ok := UnixSocketPath(addr); ok {
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSocket != 0 {
			if c, err := net.Dial("unix", path); err == nil {
				c.Close()
				return nil, fmt.Errorf("listen %s: another server is listening on the socket", addr)
			}
			_ = os.Remove(path)
		}
		return net.Listen("unix", path)
	}
	return net.Listen("tcp", addr)
}

// UnixSocketPath returns the socket path of a "unix:" address.
func UnixSocketPath(addr string) (string, bool) {
	rest, ok := strings.CutPrefix(addr, "unix:")
	if !ok {
		return "", false
	}
	if p, ok := strings.CutPrefix(rest, "//"); ok {
		return p, true
	}
	return rest, true
}

// DialTarget turns a listen address into a gRPC target.
func DialTarget(addr string) string {
	if path, ok := UnixSocketPath(addr); ok {
		if strings.HasPrefix(path, "/") {
			return "unix://" + path
		}
		return "unix:" + path
	}
	return "passthrough:///" + addr
}

// interceptorLogger adapts slog to the logging interceptor.
func interceptorLogger(l *slog.Logger) logging.Logger {
	return logging.LoggerFunc(func(ctx context.Context, lvl logging.Level, msg string, fields ...any) {
		l.Log(ctx, slog.Level(lvl), msg, fields...)
	})
}
