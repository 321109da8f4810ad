package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	ctxcmetrics "github.com/contextcompiler/ctxc/internal/metrics"
	"github.com/contextcompiler/ctxc/internal/server"
	"github.com/contextcompiler/ctxc/internal/server/inspector"
	"github.com/contextcompiler/ctxc/internal/server/proxy"
)

func runServe(ctx context.Context, args []string, io stdio, lookupEnv func(string) (string, bool)) int {
	fs := newFlagSet(io, "serve", "[--config FILE] [flags]",
		"Serve the gRPC API (ctxc.v1.ContextCompilerService, grpc.health.v1, reflection) until SIGTERM\n"+
			"or SIGINT, then stop gracefully: health turns NOT_SERVING while calls are still served for\n"+
			"--drain-delay, then new calls are refused and in-flight calls get --grace-period to finish.\n\n"+
			"On an address other than loopback or a Unix socket it needs TLS (--tls-cert, --tls-key;\n"+
			"--tls-client-ca for mTLS) or bearer tokens (--auth-token-file), or --insecure. Calls are\n"+
			"admitted within --max-concurrent-calls and --max-inflight-bytes, and refused with\n"+
			"RESOURCE_EXHAUSTED and a retry hint beyond them.\n\n"+
			"With --http-listen, the same API is served as HTTP/JSON on its own port: every RPC as\n"+
			"POST /ctxc.v1.ContextCompilerService/<Method> with the request as the JSON body, health\n"+
			"at GET /healthz, and the context inspector page at /ui/ (--http-ui: by default only on a\n"+
			"loopback address; behind the same TLS and tokens as the API). On SIGTERM the HTTP\n"+
			"requests in flight finish first, then the gRPC server stops as above, both within the\n"+
			"one grace period.\n\n"+
			"Settings come from flags, then CTXC_* environment variables, then the YAML file given by\n"+
			"--config (which also holds profiles, model_registry and models), then defaults. Tracing\n"+
			"follows the standard OTEL_* variables and is off when none is set.")
	cf := registerConfigFlags(fs, true)
	if code, done := parseFlags(fs, io, args); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(io.err, "ctxc serve: unexpected arguments %q\n", fs.Args())
		return exitUsage
	}
	tp, shutdownTracing, tracingErr := newTracerProvider(ctx, lookupEnv, version)
	if tracingErr != nil {
		tp, shutdownTracing = noop.NewTracerProvider(), func(context.Context) error { return nil }
	}
	cfg, eng, err := setUp(fs, cf, lookupEnv, tp, io.err)
	// Only a server is refused for listening in the open.
	if err := errors.Join(tracingErr, err, errors.Join(cfg.validateExposure()...)); err != nil {
		printProblems(io.err, "invalid configuration", err)
		_ = shutdownTracing(context.Background())
		return exitError
	}
	defer eng.close()
	log := newLogger(io.err, cfg)
	defer func() {
		flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := shutdownTracing(flushCtx); err != nil {
			log.Warn("flushing traces", "error", err.Error())
		}
	}()
	if err := serve(ctx, cfg, eng, tp, log); err != nil {
		log.Error("serve failed", "error", err.Error())
		return exitError
	}
	return exitOK
}

func serve(ctx context.Context, cfg Config, eng *engine, tp trace.TracerProvider, log *slog.Logger) error {
	// The tokenizers' tables are built right after the server reports
	// SERVING, all of them, in the background: health answers at once, and
	// a call that needs a table not yet built waits for that one only.
	tok, err := eng.tokens.load()
	if err != nil {
		return err
	}

	metrics, err := newMetricsServer(cfg.MetricsListen, eng)
	if err != nil {
		return err
	}
	svc, err := eng.service(log)
	if err != nil {
		return err
	}
	tlsFiles, tokens, err := cfg.security(log)
	if err != nil {
		return err
	}
	tcfg := server.TransportConfig{MaxMessageBytes: cfg.MaxMessageBytes, Reflection: cfg.Reflection, GracePeriod: cfg.GracePeriod, Logger: log, TracerProvider: tp,
		TLS: tlsFiles, Tokens: tokens, Limits: cfg.limits(), DrainDelay: cfg.DrainDelay}
	if metrics != nil {
		tcfg.MetricsRegisterer, tcfg.Admission, tcfg.Refusals = metrics.reg, metrics.domain.Admission(), metrics.domain.Admission()
		tcfg.MetricsExemplar = ctxcmetrics.TraceExemplar
	}
	transport := server.NewTransport(svc, tcfg)
	lis, err := server.Listen(cfg.Listen)
	if err != nil {
		return err
	}
	if metrics != nil {
		mTLS, mTokens := tlsFiles, tokens
		if cfg.MetricsInsecure {
			mTLS, mTokens = nil, nil
		}
		if err := metrics.start(cfg.MetricsListen, mTLS, mTokens, transport.Refused("metrics", server.RefuseUnauthenticated), log); err != nil {
			lis.Close()
			return err
		}
		defer metrics.http.Close()
	}
	var observer proxy.Observer
	if metrics != nil {
		observer = metrics.domain.Proxy()
	}
	serveCtx, stopGateway, err := startGateway(ctx, cfg, tlsFiles, tokens, transport, observer, log)
	if err != nil {
		lis.Close()
		return err
	}
	defer stopGateway()
	// Profiles are built: the server is ready. The tokenizers' tables are
	// built now, in the background: a call that needs one not yet built
	// waits for that one only.
	transport.SetServing()
	go func() {
		if err := tok.Preload(); err != nil {
			log.Error("building the tokenizers' tables", "error", err.Error())
		}
	}()
	log.Info("serving", "addr", listenAddr(lis), "version", version, "default_profile", eng.catalog.DefaultProfile(),
		"profiles", len(eng.catalog.Profiles()), "reflection", cfg.Reflection, "config", cfg.Path,
		"tls", tlsMode(tlsFiles), "auth", tokens != nil)
	if err := transport.Serve(serveCtx, lis); err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}

// metricsServer serves at GET /metrics the Prometheus registry of the gRPC
// metrics, ctxc's domain metrics (package metrics) and the Go runtime's.
type metricsServer struct {
	reg    *prometheus.Registry
	domain *ctxcmetrics.Metrics
	http   *http.Server
}

// newMetricsServer builds the metrics server and makes the engine's runs
// report to its domain metrics, or returns nil when addr is empty.
func newMetricsServer(addr string, eng *engine) (*metricsServer, error) {
	if addr == "" {
		return nil, nil
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	domain, err := eng.metrics(reg)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	eng.observer = domain
	mux := http.NewServeMux()
	// OpenMetrics carries the exemplars (trace ids) to a Prometheus that asks for it.
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg, EnableOpenMetrics: true}))
	return &metricsServer{reg: reg, domain: domain, http: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}}, nil
}

// start listens on addr and serves in the background until m.http is closed.
// With TLS or tokens, /metrics has the API's protection: served over the
// API's TLS (asking for a client certificate as the API does) and answered
// only with one of its bearer tokens.
func (m *metricsServer) start(addr string, tlsFiles *server.TLS, tokens *server.Tokens, refuse http.HandlerFunc, log *slog.Logger) error {
	mlis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	m.http.Handler = server.RequireBearer(tokens, "Authorization", refuse, m.http.Handler)
	scheme := "http"
	if tlsFiles != nil {
		m.http.TLSConfig, scheme = tlsFiles.Config("http/1.1"), "https"
	}
	go func() {
		serve := func() error { return m.http.Serve(mlis) }
		if tlsFiles != nil {
			serve = func() error { return m.http.ServeTLS(mlis, "", "") }
		}
		if err := serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server", "error", err.Error())
		}
	}()
	log.Info("metrics", "addr", scheme+"://"+mlis.Addr().String()+"/metrics", "tls", tlsFiles != nil, "tokens", tokens != nil)
	return nil
}

// startGateway starts the HTTP/JSON gateway when cfg asks for one, and
// returns the context that ends the gRPC server and what releases the
// gateway. With the gateway, that context ends only once the drain delay
// has passed (both ports accepting, health NOT_SERVING) and the HTTP
// requests in flight have finished, because they are gRPC calls too: one
// grace period covers both, the HTTP requests draining first and the gRPC
// server getting what is left.
func startGateway(ctx context.Context, cfg Config, tlsFiles *server.TLS, tokens *server.Tokens, transport *server.Transport, observer proxy.Observer, log *slog.Logger) (context.Context, func(), error) {
	if cfg.HTTPListen == "" {
		return ctx, func() {}, nil
	}
	proxies, _ := trustedProxies(cfg.HTTPTrustedProxies) // validated with the config
	gcfg := server.GatewayConfig{MaxMessageBytes: cfg.MaxMessageBytes, Logger: log, Limits: cfg.httpLimits(), TLS: tlsFiles,
		CORSOrigins: cfg.HTTPCORSOrigins, AllowedHosts: cfg.HTTPAllowedHosts, TrustedProxies: proxies, Tokens: tokens}
	if cfg.inspectorEnabled() {
		gcfg.Inspector = inspector.Handler()
	}
	px, closeProxy, err := newProxy(cfg, transport, observer, log)
	if err != nil {
		return nil, nil, err
	}
	if px != nil {
		gcfg.Proxy = px
	}
	gw, err := server.NewGateway(transport, gcfg)
	if err != nil {
		closeProxy()
		return nil, nil, err
	}
	hlis, err := net.Listen("tcp", cfg.HTTPListen)
	if err != nil {
		gw.Close()
		closeProxy()
		return nil, nil, fmt.Errorf("http: %w", err)
	}
	go gw.Serve(server.LimitPerAddress(hlis, cfg.MaxConnectionsPerAddress, cfg.HTTPReadHeaderTimeout))
	serveCtx, stopGRPC := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		select {
		case <-ctx.Done():
			transport.Drain(context.Background())
			grace := cfg.GracePeriod
			if grace <= 0 {
				grace = server.DefaultGracePeriod
			}
			deadline := time.Now().Add(grace)
			transport.StopBy(deadline)
			gw.Shutdown(deadline)
			stopGRPC()
		case <-serveCtx.Done(): // serve returned without a signal
		}
	}()
	// Logged before "serving" so that whoever waits for "serving" can read it.
	scheme := "http"
	if tlsFiles != nil {
		scheme = "https"
	}
	log.Info("serving http", "addr", hlis.Addr().String(), "scheme", scheme, "inspector", gcfg.Inspector != nil)
	if gcfg.Inspector != nil {
		log.Info("inspector", "url", scheme+"://"+hlis.Addr().String()+"/ui/")
	}
	for u := range cfg.Proxy.upstreams() {
		log.Info("proxy", "upstream", string(u), "base_url", scheme+"://"+hlis.Addr().String())
	}
	return serveCtx, func() { stopGRPC(); gw.Close(); closeProxy() }, nil
}

// tlsMode names the gRPC and HTTP ports' TLS for the start-up line.
func tlsMode(t *server.TLS) string {
	switch {
	case t == nil:
		return "off"
	case t.MutualTLS():
		return "mtls"
	}
	return "on"
}

// listenAddr is the address clients dial, with the real port when :0 was asked for.
func listenAddr(lis net.Listener) string {
	if lis.Addr().Network() == "unix" {
		return "unix://" + lis.Addr().String()
	}
	return lis.Addr().String()
}
