package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	ctxcmetrics "github.com/contextcompiler/ctxc/internal/metrics"
	"github.com/contextcompiler/ctxc/internal/service"
	"github.com/contextcompiler/ctxc/internal/service/inspector"
	"github.com/contextcompiler/ctxc/internal/service/proxy"
)

// ConfigError is Start's error when the configuration is refused, before
// anything listens: Err joins every problem (of the settings, of the engine
// built from them, and the refusal to serve in the open), each naming its key.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Check reports every problem Start would refuse cfg for (a *ConfigError),
// without listening: the settings (Validate), the engine built from them
// (model registry, helper models, caches, profiles), and an address other
// machines can reach with neither TLS nor tokens nor Insecure.
func Check(cfg *Config) error {
	eng, err := check(cfg)
	if eng != nil {
		eng.close()
	}
	return err
}

// check is Check, keeping the engine when there is no problem.
func check(cfg *Config) (*engine, error) {
	problems := cfg.validate()
	eng, err := newEngine(*cfg, cfg.tracerProvider(), cfg.logger())
	if err != nil {
		problems = append(problems, err)
	}
	problems = append(problems, cfg.validateExposure()...)
	if len(problems) > 0 {
		if eng != nil {
			eng.close()
		}
		return nil, &ConfigError{errors.Join(problems...)}
	}
	return eng, nil
}

// Server is a running ctxc service: the gRPC API (with health and, when
// configured, reflection), and the HTTP gateway and /metrics when their
// addresses are set. Start returns it serving.
type Server struct {
	log       *slog.Logger
	eng       *engine
	transport *service.Transport

	addr, httpAddr, metricsAddr string

	// stopping ends when shutdown begins; now makes it stop at once.
	stopping context.Context
	begin    context.CancelFunc
	now      bool
	nowMu    sync.Mutex

	ready chan struct{}
	done  chan struct{}
	err   error
}

// Start checks cfg (every problem at once, as a *ConfigError), builds the
// engine, opens the listeners and serves in the background. When Start
// returns without error, health reports SERVING on every port; the
// tokenizers' tables are then built in the background (a call that needs
// one not yet built waits for that one only).
//
// When ctx ends, the server shuts down as Shutdown does (as `ctxc serve`
// does on SIGTERM). Any other error (a port taken) is returned after
// everything opened is released.
func Start(ctx context.Context, cfg *Config) (*Server, error) {
	c := *cfg // later changes to *cfg do not reach the running server
	eng, err := check(&c)
	if err != nil {
		return nil, err
	}
	log := c.logger()
	s := &Server{log: log, eng: eng, ready: make(chan struct{}), done: make(chan struct{})}
	s.stopping, s.begin = context.WithCancel(context.WithoutCancel(ctx))
	run, err := s.start(&c)
	if err != nil {
		s.begin()
		eng.close()
		return nil, err
	}
	go func() {
		select {
		case <-ctx.Done():
			s.begin()
		case <-s.done:
		}
	}()
	go func() {
		s.err = run()
		s.begin()
		eng.close()
		close(s.done)
	}()
	return s, nil
}

// start opens every listener and returns what serves until shutdown and
// then releases them.
func (s *Server) start(cfg *Config) (run func() error, err error) {
	eng, log := s.eng, s.log
	// The tokenizers' tables are built right after the server reports
	// SERVING, all of them, in the background: health answers at once, and
	// a call that needs a table not yet built waits for that one only.
	tok, err := eng.tokens.load()
	if err != nil {
		return nil, err
	}
	metrics, err := newMetricsServer(cfg.MetricsListen, eng)
	if err != nil {
		return nil, err
	}
	svc, err := eng.service(log)
	if err != nil {
		return nil, err
	}
	tlsFiles, tokens, err := cfg.security(log)
	if err != nil {
		return nil, err
	}
	tcfg := service.TransportConfig{MaxMessageBytes: cfg.MaxMessageBytes, Reflection: cfg.Reflection, GracePeriod: cfg.GracePeriod, Logger: log,
		TracerProvider: cfg.tracerProvider(), TLS: tlsFiles, Tokens: tokens, Limits: cfg.limits().internal(), DrainDelay: cfg.DrainDelay,
		Quotas: cfg.Quotas.internal()}
	if metrics != nil {
		tcfg.MetricsRegisterer, tcfg.Admission, tcfg.Refusals = metrics.reg, metrics.domain.Admission(), metrics.domain.Admission()
		tcfg.QuotaObserver = metrics.domain.Admission()
		tcfg.MetricsExemplar = ctxcmetrics.TraceExemplar
	}
	transport := service.NewTransport(svc, tcfg)
	s.transport = transport
	lis, err := service.Listen(cfg.Listen)
	if err != nil {
		return nil, err
	}
	s.addr = listenAddr(lis)
	closeMetrics := func() {}
	if metrics != nil {
		mTLS, mTokens := tlsFiles, tokens
		if cfg.MetricsInsecure {
			mTLS, mTokens = nil, nil
		}
		if s.metricsAddr, err = metrics.start(cfg.MetricsListen, mTLS, mTokens, transport.Refused("metrics", service.RefuseUnauthenticated), log); err != nil {
			lis.Close()
			return nil, err
		}
		closeMetrics = func() { metrics.http.Close() }
	}
	var observer proxy.Observer
	if metrics != nil {
		observer = metrics.domain.Proxy()
	}
	serveCtx, stopGateway, err := s.startGateway(cfg, tlsFiles, tokens, observer)
	if err != nil {
		lis.Close()
		closeMetrics()
		return nil, err
	}
	// Profiles are built: the server is ready. The tokenizers' tables are
	// built now, in the background: a call that needs one not yet built
	// waits for that one only.
	transport.SetServing()
	close(s.ready)
	go func() {
		if err := tok.Preload(); err != nil {
			log.Error("building the tokenizers' tables", "error", err.Error())
		}
	}()
	log.Info("serving", "addr", s.addr, "version", eng.version, "default_profile", eng.catalog.DefaultProfile(),
		"profiles", len(eng.catalog.Profiles()), "reflection", cfg.Reflection, "config", cfg.Path,
		"tls", tlsMode(tlsFiles), "auth", tokens != nil)
	return func() error {
		defer closeMetrics()
		defer stopGateway()
		if err := transport.Serve(serveCtx, lis); err != nil {
			return err
		}
		log.Info("stopped")
		return nil
	}, nil
}

// Addr is the address the gRPC API listens on, as clients dial it: host:port
// with the real port when port 0 was asked for, or unix:///path.
func (s *Server) Addr() string { return s.addr }

// HTTPAddr is the HTTP gateway's host:port; "" without http_listen.
func (s *Server) HTTPAddr() string { return s.httpAddr }

// MetricsAddr is /metrics' host:port; "" without metrics_listen.
func (s *Server) MetricsAddr() string { return s.metricsAddr }

// Ready is closed once health reports SERVING, which Start does before it
// returns: it is there for code that is handed the server and must not
// call it before.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Done is closed once the server has stopped and released everything.
func (s *Server) Done() <-chan struct{} { return s.done }

// Wait waits until the server has stopped, and returns why it stopped if
// not because it was asked to (a listener failed).
func (s *Server) Wait() error {
	<-s.done
	return s.err
}

// Shutdown stops the server the way `ctxc serve` does on SIGTERM: health
// turns NOT_SERVING on every port while calls are still served for the drain
// delay, then new calls are refused and the calls in flight (HTTP requests
// first, then gRPC calls) get the grace period to finish before whatever
// still runs is cut off. It waits until the server has stopped, or until ctx
// ends (the shutdown goes on; Wait waits for its end), and returns ctx's
// error then, else what Wait returns.
func (s *Server) Shutdown(ctx context.Context) error {
	s.begin()
	select {
	case <-s.done:
		return s.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the server at once: health turns NOT_SERVING, no drain delay,
// no grace period; calls in flight are cancelled. It waits until everything
// is released. Called once a shutdown has begun (Shutdown, or Start's
// context ended), it does not cut it short: it waits for it to end.
func (s *Server) Close() error {
	s.nowMu.Lock()
	if s.stopping.Err() == nil {
		s.now = true
		s.transport.StopBy(time.Now())
	}
	s.nowMu.Unlock()
	s.begin()
	return s.Wait()
}

// immediate reports whether Close asked to stop at once.
func (s *Server) immediate() bool {
	s.nowMu.Lock()
	defer s.nowMu.Unlock()
	return s.now
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

// start listens on addr and serves in the background until m.http is closed,
// returning the address it listens on. With TLS or tokens, /metrics has the
// API's protection: served over the API's TLS (asking for a client
// certificate as the API does) and answered only with one of its bearer
// tokens.
func (m *metricsServer) start(addr string, tlsFiles *service.TLS, tokens *service.Tokens, refuse http.HandlerFunc, log *slog.Logger) (string, error) {
	mlis, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("metrics: %w", err)
	}
	m.http.Handler = service.RequireBearer(tokens, "Authorization", refuse, m.http.Handler)
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
	return mlis.Addr().String(), nil
}

// startGateway starts the HTTP/JSON gateway when cfg asks for one, and
// returns the context that ends the gRPC server and what releases the
// gateway. Without the gateway, that context is s.stopping. With it, that
// context ends only once the drain delay has passed (both ports accepting,
// health NOT_SERVING) and the HTTP requests in flight have finished,
// because they are gRPC calls too: one grace period covers both, the HTTP
// requests draining first and the gRPC server getting what is left.
func (s *Server) startGateway(cfg *Config, tlsFiles *service.TLS, tokens *service.Tokens, observer proxy.Observer) (context.Context, func(), error) {
	if cfg.HTTPListen == "" {
		return s.stopping, func() {}, nil
	}
	transport, log := s.transport, s.log
	proxies, _ := trustedProxies(cfg.HTTPTrustedProxies) // validated with the config
	gcfg := service.GatewayConfig{MaxMessageBytes: cfg.MaxMessageBytes, Logger: log, Limits: cfg.httpLimits().internal(), TLS: tlsFiles,
		CORSOrigins: cfg.HTTPCORSOrigins, AllowedHosts: cfg.HTTPAllowedHosts, TrustedProxies: proxies, Tokens: tokens}
	if cfg.inspectorEnabled() {
		gcfg.Inspector = inspector.Handler()
	}
	px, closeProxy, err := newProxy(*cfg, transport, observer, log)
	if err != nil {
		return nil, nil, err
	}
	if px != nil {
		gcfg.Proxy = px
	}
	gw, err := service.NewGateway(transport, gcfg)
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
	s.httpAddr = hlis.Addr().String()
	go gw.Serve(service.LimitPerAddress(hlis, cfg.MaxConnectionsPerAddress, cfg.HTTPLimits.ReadHeaderTimeout))
	serveCtx, stopGRPC := context.WithCancel(context.Background())
	go func() {
		select {
		case <-s.stopping.Done():
			drain, cancel := context.WithCancel(context.Background())
			grace := cfg.GracePeriod
			if grace <= 0 {
				grace = service.DefaultGracePeriod
			}
			if s.immediate() {
				cancel()
				grace = 0
			}
			transport.Drain(drain)
			cancel()
			deadline := time.Now().Add(grace)
			transport.StopBy(deadline)
			gw.Shutdown(deadline)
			stopGRPC()
		case <-serveCtx.Done(): // serve returned without a shutdown
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
	// One line an API: where its clients point their base URL (listen), and
	// the upstream base URL the calls go on to, with the same path.
	ups := cfg.Proxy.upstreams()
	for _, u := range proxy.Upstreams() {
		if raw, ok := ups[u]; ok {
			log.Info("proxy", "api", string(u), "listen", scheme+"://"+hlis.Addr().String(), "upstream", raw)
		}
	}
	return serveCtx, func() { stopGRPC(); gw.Close(); closeProxy() }, nil
}

// tlsMode names the gRPC and HTTP ports' TLS for the start-up line.
func tlsMode(t *service.TLS) string {
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
