package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/textproto"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/contextcompiler/ctxc/internal/adapter"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/rs/cors"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// Gateway serves the API as HTTP/JSON: every RPC as
// POST /ctxc.v1.ContextCompilerService/<Method> with the request as the JSON
// body, and the gRPC health status at GET /healthz.
//
// It calls the gRPC server through the transport's in-process connection
// instead of the service directly, so an HTTP request passes the same
// authentication, admission limits, interceptors (call log, metrics, panic
// recovery, tracing), message limits and error mapping as a gRPC call; the
// price is a protobuf encode and decode per call. The HTTP client's address
// (and its certificate's name under mTLS) go along as metadata that the
// server believes only on that connection.
type Gateway struct {
	http *http.Server
	conn *grpc.ClientConn
	tls  *TLS
	log  *slog.Logger
}

// GatewayConfig configures the HTTP side of the gateway.
type GatewayConfig struct {
	// MaxMessageBytes bounds request bodies (413 past it) and the calls' messages.
	MaxMessageBytes int
	Logger          *slog.Logger
	// Limits are the HTTP server's timeouts and header limit; DefaultHTTPLimits() when zero.
	Limits HTTPLimits
	// TLS, when set, serves HTTPS (and requires client certificates when it has client CAs).
	TLS *TLS
	// CORSOrigins lists the origins browsers may call from; none turns CORS off.
	CORSOrigins []string
	// AllowedHosts, when not empty, is the only Host header values served
	// (against DNS rebinding); /healthz answers any Host.
	AllowedHosts []string
	// TrustedProxies are the addresses whose X-Forwarded-For is believed when
	// naming the client.
	TrustedProxies []netip.Prefix
	// Inspector, when set, is the inspector page's handler, served at /ui/
	// (its API calls at /ui/api/, see withInspector).
	Inspector http.Handler
	// Tokens are the transport's bearer tokens; with them, the inspector's
	// assets need one too.
	Tokens *Tokens
	// Proxy, when set, answers the requests it serves (the provider-compatible
	// endpoints of package server/proxy) in place of the API, with its own
	// content-type and body checks and errors in the provider's shape; with
	// Tokens, only those that carry one in ProxyTokenHeader (proxyAuth).
	Proxy Proxy
}

// Proxy is a handler for some of the gateway's paths.
type Proxy interface {
	http.Handler
	// Serves reports whether the handler answers r.
	Serves(r *http.Request) bool
	// Unauthenticated answers r, which it serves, for want of ctxc's token
	// in ProxyTokenHeader (the gateway checks it before the proxy sees r).
	Unauthenticated(w http.ResponseWriter, r *http.Request)
}

// HTTPLimits bound the HTTP server's connections. The yaml tags are the
// keys of the config file, which embeds HTTPLimits (embed.Config).
type HTTPLimits struct {
	// ReadHeaderTimeout bounds reading a request's headers, ReadTimeout the
	// whole request with its body (a client trickling a body is cut off),
	// WriteTimeout the request from the end of its headers to the end of the
	// answer (so it must exceed the longest call), IdleTimeout a kept-alive
	// connection waiting for its next request.
	ReadHeaderTimeout time.Duration `yaml:"http_read_header_timeout"`
	ReadTimeout       time.Duration `yaml:"http_read_timeout"`
	WriteTimeout      time.Duration `yaml:"http_write_timeout"`
	IdleTimeout       time.Duration `yaml:"http_idle_timeout"`
	// MaxHeaderBytes bounds a request's header. It has no key of its own:
	// the config's max_header_bytes (Limits.MaxHeaderBytes) sets it.
	MaxHeaderBytes int `yaml:"-"`
}

// DefaultHTTPLimits are the HTTP limits of a gateway that sets none.
func DefaultHTTPLimits() HTTPLimits {
	return HTTPLimits{ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: 6 * time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
}

// NewGateway builds the gateway in front of t.
func NewGateway(t *Transport, cfg GatewayConfig) (*Gateway, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Limits == (HTTPLimits{}) {
		cfg.Limits = DefaultHTTPLimits()
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	conn, err := t.DialInProcess(grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(cfg.MaxMessageBytes), grpc.MaxCallSendMsgSize(cfg.MaxMessageBytes)))
	if err != nil {
		return nil, fmt.Errorf("http gateway: %w", err)
	}
	marshaler := enumJSON{&runtime.JSONPb{
		// lowerCamelCase names and no zero values, as grpcurl prints; protojson
		// accepts proto names too. Unknown fields are errors, so a typo is not
		// silently ignored. Enum values may go by their short names (enumJSON).
		MarshalOptions:   protojson.MarshalOptions{EmitUnpopulated: false, UseProtoNames: false},
		UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
	}}
	proxies := cfg.TrustedProxies
	mux := runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, marshaler),
		runtime.WithErrorHandler(errorHandler),
		runtime.WithIncomingHeaderMatcher(headerMatcher),
		runtime.WithHealthzEndpoint(healthpb.NewHealthClient(conn)),
		runtime.WithMetadata(func(_ context.Context, r *http.Request) metadata.MD {
			return ClientMetadata(r, proxies)
		}),
	)
	if err := ctxcv1.RegisterContextCompilerServiceHandler(context.Background(), mux, conn); err != nil {
		conn.Close()
		return nil, fmt.Errorf("http gateway: %w", err)
	}
	var handler http.Handler = limitBody(mux, marshaler, int64(cfg.MaxMessageBytes))
	handler = requireJSON(handler, mux, marshaler)
	handler = gatewayAuth(handler, cfg.Tokens, t.refusals, proxies, mux, marshaler)
	if len(cfg.CORSOrigins) > 0 {
		handler = cors.New(cors.Options{
			AllowedOrigins: cfg.CORSOrigins,
			AllowedMethods: []string{http.MethodGet, http.MethodPost},
			AllowedHeaders: []string{"Content-Type", "Authorization", "Grpc-Timeout", "Traceparent", "Tracestate", "Baggage"},
			MaxAge:         600,
		}).Handler(handler)
	}
	if cfg.Inspector != nil {
		handler = withInspector(handler, cfg.Inspector, cfg.Tokens)
	}
	if cfg.Proxy != nil {
		handler = withProxy(handler, cfg.Proxy, proxyAuth(cfg.Proxy, cfg.Tokens, t.refusals, proxies))
	}
	if len(cfg.AllowedHosts) > 0 {
		handler = allowHosts(handler, cfg.AllowedHosts, mux, marshaler)
	}
	handler = requireUTF8Path(handler, mux, marshaler)
	lim := cfg.Limits
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: lim.ReadHeaderTimeout,
		ReadTimeout:       lim.ReadTimeout,
		WriteTimeout:      lim.WriteTimeout,
		IdleTimeout:       lim.IdleTimeout,
		MaxHeaderBytes:    lim.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug),
	}
	if cfg.TLS != nil {
		srv.TLSConfig = cfg.TLS.Config("h2", "http/1.1")
	}
	return &Gateway{http: srv, conn: conn, tls: cfg.TLS, log: cfg.Logger}, nil
}

// Serve serves HTTP (HTTPS with TLS) on lis until Shutdown or Close.
func (g *Gateway) Serve(lis net.Listener) {
	var err error
	if g.tls != nil {
		err = g.http.ServeTLS(lis, "", "")
	} else {
		err = g.http.Serve(lis)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
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

// Close releases the in-process connection; call it after the gRPC server stopped.
func (g *Gateway) Close() {
	_ = g.http.Close()
	_ = g.conn.Close()
}

// ClientMetadata is the metadata an HTTP handler that calls the server over
// the in-process connection (DialInProcess) sends with each call: the HTTP
// client's address, named as clientAddress does with trusted, and under mTLS
// its certificate's common name, which the server believes only on that
// connection and puts in its call log and caller.
func ClientMetadata(r *http.Request, trusted []netip.Prefix) metadata.MD {
	md := metadata.Pairs(mdClientAddress, clientAddress(r, trusted))
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		md.Set(mdClientCN, r.TLS.PeerCertificates[0].Subject.CommonName)
	}
	return md
}

// ClientAddress is the HTTP client's IP address as the gateway names it in
// its calls (clientAddress).
func ClientAddress(r *http.Request, trusted []netip.Prefix) string { return clientAddress(r, trusted) }

// clientAddress is the HTTP client's IP address: the connection's, or, when
// the connection comes from a trusted proxy, the last address in
// X-Forwarded-For that is not a trusted proxy's (the first one the proxies
// did not add themselves, so a client cannot forge it).
func clientAddress(r *http.Request, trusted []netip.Prefix) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	isTrusted := func(s string) bool {
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return false
		}
		for _, p := range trusted {
			if p.Contains(ip.Unmap()) {
				return true
			}
		}
		return false
	}
	if !isTrusted(host) {
		return host
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		for _, h := range strings.Split(v, ",") {
			hops = append(hops, strings.TrimSpace(h))
		}
	}
	for i := len(hops) - 1; i >= 0; i-- {
		if _, err := netip.ParseAddr(hops[i]); err != nil {
			break // garbage: stop believing the chain here
		}
		if !isTrusted(hops[i]) {
			return hops[i]
		}
	}
	return host
}

// withProxy hands the requests the proxy serves to serve (the proxy behind
// its token check), the rest to api.
func withProxy(api http.Handler, proxy Proxy, serve http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if proxy.Serves(r) {
			serve.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// requireJSON refuses a POST whose body is not declared JSON (415): a
// browser sends text/plain and form posts across origins without asking
// first (no CORS preflight), and those must not run.
func requireJSON(next http.Handler, mux *runtime.ServeMux, marshaler runtime.Marshaler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || mediaType != "application/json" {
				st, _ := status.New(codes.InvalidArgument, "Content-Type must be application/json").
					WithDetails(&errdetails.ErrorInfo{Reason: adapter.ReasonInvalidArgument, Domain: adapter.ErrorDomain, Metadata: map[string]string{"field": "Content-Type"}})
				runtime.DefaultHTTPErrorHandler(r.Context(), mux, marshaler, w, r,
					&runtime.HTTPStatusError{HTTPStatus: http.StatusUnsupportedMediaType, Err: st.Err()})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// allowHosts serves only requests whose Host is one of hosts (with or
// without a port); a DNS rebinding page in a browser sends its own domain
// as Host and is refused with 403. /healthz answers any Host, for probes
// that address the pod.
func allowHosts(next http.Handler, hosts []string, mux *runtime.ServeMux, marshaler runtime.Marshaler) http.Handler {
	allowed := map[string]bool{}
	for _, h := range hosts {
		allowed[strings.ToLower(h)] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := strings.ToLower(r.Host)
		bare := host
		if h, _, err := net.SplitHostPort(host); err == nil {
			bare = h
		}
		if r.URL.Path != healthzPath && !allowed[host] && !allowed[bare] && !allowed[strings.Trim(bare, "[]")] {
			st := status.New(codes.PermissionDenied, "Host not allowed")
			runtime.DefaultHTTPErrorHandler(r.Context(), mux, marshaler, w, r,
				&runtime.HTTPStatusError{HTTPStatus: http.StatusForbidden, Err: st.Err()})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// traceHeaders are forwarded to the gRPC server as they are, so an HTTP
// caller's trace continues in the server's spans.
var traceHeaders = map[string]bool{"Traceparent": true, "Tracestate": true, "Baggage": true}

func headerMatcher(key string) (string, bool) {
	canonical := textproto.CanonicalMIMEHeaderKey(key)
	if traceHeaders[canonical] {
		return canonical, true
	}
	md, ok := runtime.DefaultHeaderMatcher(key)
	if ok && strings.HasPrefix(strings.ToLower(md), mdGatewayPrefix) {
		return "", false // only the gateway itself sets these
	}
	return md, ok
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
		WithDetails(&errdetails.ErrorInfo{Reason: agentstate.ReasonLimitExceeded, Domain: adapter.ErrorDomain,
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
	// The gateway's own decoding errors (grpc-gateway's) may quote the body.
	if st := status.Convert(err); len(st.Message()) > adapter.MaxStatusMessageBytes {
		p := st.Proto()
		p.Message = adapter.Clip(p.Message, adapter.MaxStatusMessageBytes)
		err = status.FromProto(p).Err()
	}
	// A busy server's retry hint, as HTTP clients read it.
	if st, ok := status.FromError(err); ok {
		for _, d := range st.Details() {
			if retry, ok := d.(*errdetails.RetryInfo); ok {
				w.Header().Set("Retry-After", strconv.Itoa(max(1, int(retry.GetRetryDelay().AsDuration().Round(time.Second)/time.Second))))
			}
		}
	}
	runtime.DefaultHTTPErrorHandler(ctx, mux, marshaler, w, r, err)
}

// requireUTF8Path answers 400 to a path that is not UTF-8 once decoded (such
// as overlong encodings of "."), which no route of the gateway has and which
// the inspector's file server would answer 500.
func requireUTF8Path(next http.Handler, mux *runtime.ServeMux, marshaler runtime.Marshaler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !utf8.ValidString(r.URL.Path) {
			runtime.HTTPError(r.Context(), mux, marshaler, w, r, status.Error(codes.InvalidArgument, "the request path is not UTF-8"))
			return
		}
		next.ServeHTTP(w, r)
	})
}
