package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"golang.org/x/sync/semaphore"
	"google.golang.org/grpc"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/service"
)

// What the proxy does with a call whose compile fails for a reason other
// than a refusal (Config.OnCompileError).
const (
	// OnErrorForward sends the client's body as it is.
	OnErrorForward = "forward"
	// OnErrorRefuse answers with the provider's error.
	OnErrorRefuse = "refuse"
)

// Defaults of a Config that sets none.
const (
	DefaultTimeout            = 10 * time.Minute
	DefaultMaxConcurrentCalls = 256
	DefaultOnCompileError     = OnErrorForward
)

// The request headers of ctxc's own (every X-Ctxc- header stays here: none
// goes to the upstream).
const (
	// HeaderProfile names the profile of a call.
	HeaderProfile = "X-Ctxc-Profile"
	// HeaderMaxContextTokens caps the window of a call.
	HeaderMaxContextTokens = "X-Ctxc-Max-Context-Tokens"
	// HeaderToken carries ctxc's bearer token, bare, when the server has
	// tokens: Authorization belongs to the provider. The gateway checks it
	// before the body is read.
	HeaderToken = service.ProxyTokenHeader
)

// The response headers that say what ctxc did.
const (
	headerProfile      = "X-Ctxc-Profile"
	headerTokensBefore = "X-Ctxc-Tokens-Before"
	headerTokensAfter  = "X-Ctxc-Tokens-After"
	headerCompacted    = "X-Ctxc-Compacted"
	headerForwarded    = "X-Ctxc-Forwarded"
	headerError        = "X-Ctxc-Error"
	ctxcHeaderPrefix   = "X-Ctxc-"
)

// Compiler compiles through the gRPC server: the generated client over the
// transport's direct calls (service.Transport.DirectConn).
type Compiler interface {
	Compile(ctx context.Context, in *ctxcv1.CompileRequest, opts ...grpc.CallOption) (*ctxcv1.CompileResponse, error)
}

// Observer is told what each proxied call did (package metrics implements it).
type Observer interface {
	// Proxied counts a call by upstream, endpoint name and outcome.
	Proxied(upstream, endpoint, outcome string)
	// UpstreamAnswered records how long the upstream took to send its
	// response headers.
	UpstreamAnswered(upstream, endpoint string, d time.Duration)
	// Compiled records the tokens of a forwarded context before and after
	// the compile, and whether it was compacted.
	Compiled(upstream string, before, after int, compacted bool)
}

// The outcomes of a call, the outcome label of the metrics.
const (
	// OutcomeUnchanged: the compile left the context as it was; the client's
	// bytes went to the upstream.
	OutcomeUnchanged = "unchanged"
	// OutcomeRewritten: the compiled context went to the upstream.
	OutcomeRewritten = "rewritten"
	// OutcomeUncompiled: the compile failed; the client's bytes went to the
	// upstream (on_compile_error: forward).
	OutcomeUncompiled = "uncompiled"
	// OutcomeRefused: ctxc answered with the provider's error.
	OutcomeRefused = "refused"
	// OutcomeUpstreamFailed: the upstream could not be reached or its answer
	// broke off.
	OutcomeUpstreamFailed = "upstream_failed"
)

// Outcomes lists every outcome.
func Outcomes() []string {
	return []string{OutcomeUnchanged, OutcomeRewritten, OutcomeUncompiled, OutcomeRefused, OutcomeUpstreamFailed}
}

// Config configures the proxy.
type Config struct {
	// Upstreams are the providers' base URLs (scheme, host, and a path
	// prefix or none): an endpoint is served only when its upstream is set,
	// and a call goes to the upstream's URL joined with the request's path.
	Upstreams map[Upstream]*url.URL
	// Profile is the profile of a call that names none in X-Ctxc-Profile;
	// Profiles overrides it per upstream. "" is the server's default profile.
	Profile  string
	Profiles map[Upstream]string
	// MaxContextTokens caps the window of every call below the model's (0:
	// the model's); X-Ctxc-Max-Context-Tokens sets one per call.
	MaxContextTokens int
	// OnCompileError is OnErrorForward or OnErrorRefuse.
	OnCompileError string
	// Timeout bounds one call from its headers to the end of the upstream's
	// answer, a stream included.
	Timeout time.Duration
	// MaxConcurrentCalls bounds the calls in flight; more get the provider's
	// 429 with Retry-After.
	MaxConcurrentCalls int
	// MaxBodyBytes bounds a request body; a larger one gets 413.
	MaxBodyBytes int
	// TrustedProxies are the addresses whose X-Forwarded-For names the
	// client, as for the gateway.
	TrustedProxies []netip.Prefix
	Logger         *slog.Logger
	// Observer, when set, is told of every call.
	Observer Observer
	// Transport sends the requests to the upstreams; when nil, one with
	// connection and TLS handshake timeouts and HTTP/2.
	Transport http.RoundTripper
}

// Proxy serves the endpoints of the configured upstreams.
type Proxy struct {
	cfg       Config
	compiler  Compiler
	upstreams map[Upstream]*url.URL
	client    *http.Client
	calls     *semaphore.Weighted
	log       *slog.Logger
	observer  Observer
}

// New builds the proxy over compiler, a client of the gRPC server on its
// in-process connection (service.Transport.DialInProcess).
func New(compiler Compiler, cfg Config) (*Proxy, error) {
	if compiler == nil {
		return nil, errors.New("proxy: a compiler is required")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxConcurrentCalls <= 0 {
		cfg.MaxConcurrentCalls = DefaultMaxConcurrentCalls
	}
	switch cfg.OnCompileError {
	case "":
		cfg.OnCompileError = DefaultOnCompileError
	case OnErrorForward, OnErrorRefuse:
	default:
		return nil, fmt.Errorf("proxy: on_compile_error %q must be %s or %s", cfg.OnCompileError, OnErrorForward, OnErrorRefuse)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Transport == nil {
		cfg.Transport = newTransport()
	}
	p := &Proxy{cfg: cfg, compiler: compiler, upstreams: map[Upstream]*url.URL{}, calls: semaphore.NewWeighted(int64(cfg.MaxConcurrentCalls)),
		log: cfg.Logger, observer: cfg.Observer}
	for u, base := range cfg.Upstreams {
		if base == nil {
			continue
		}
		if err := CheckUpstream(base.String()); err != nil {
			return nil, fmt.Errorf("proxy: %s upstream: %w", u, err)
		}
		p.upstreams[u] = base
	}
	// Redirects are the client's to follow: one would take the caller's
	// credentials to a host the configuration does not name.
	p.client = &http.Client{Transport: cfg.Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return p, nil
}

// CheckUpstream reports what is wrong with an upstream base URL: it must be
// http or https with a host, and hold no query, fragment or credentials.
func CheckUpstream(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a URL: %v", raw, err)
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return fmt.Errorf("%q is not a base URL such as https://api.openai.com", raw)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return fmt.Errorf("%q: a base URL has no query, fragment or credentials", raw)
	}
	return nil
}

// newTransport is the upstream transport: connection and handshake bounded,
// the answer bounded by the call's context (streams are long).
func newTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// Close releases the idle connections to the upstreams.
func (p *Proxy) Close() { p.client.CloseIdleConnections() }

// ServeHTTP answers one call: checked, compiled, forwarded, its answer
// copied back as it arrives.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ep, model, ok := route(r.URL.Path)
	base := p.upstreams[ep.Upstream]
	if !ok || base == nil {
		http.NotFound(w, r)
		return
	}
	c := &call{p: p, ep: ep, model: model, base: base, w: w, r: r, start: time.Now()}
	ctx, cancel := context.WithTimeout(r.Context(), p.cfg.Timeout)
	defer cancel()
	// The server's write timeout suits API calls; a stream may take the whole call.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(p.cfg.Timeout + time.Second))
	defer c.finish()
	if !p.calls.TryAcquire(1) {
		c.refuse(overloaded("ctxc: too many calls in flight (proxy max_concurrent_calls); retry shortly", time.Second))
		return
	}
	defer p.calls.Release(1)
	if rf := c.read(); rf != nil {
		c.refuse(rf)
		return
	}
	body, rf := c.compile(ctx)
	if rf != nil {
		c.refuse(rf)
		return
	}
	c.forward(ctx, body)
}

// Unauthenticated answers a request the gateway refused for want of ctxc's
// token (service.ProxyTokenHeader), in the provider's shape, without reading
// its body. The gateway logs refusals (throttled) and counts them; the
// proxy's metrics count it as refused, and no line per call is logged, so
// that a flood does not flood the log.
func (p *Proxy) Unauthenticated(w http.ResponseWriter, r *http.Request) {
	ep, _, _ := route(r.URL.Path)
	if p.observer != nil {
		p.observer.Proxied(string(ep.Upstream), ep.Name, OutcomeRefused)
	}
	writeError(w, ep.Upstream, unauthenticated())
}

// unauthenticated is the refusal of a call without ctxc's token.
func unauthenticated() *refusal {
	return &refusal{status: http.StatusUnauthorized, kind: kindUnauthenticated, param: HeaderToken, reason: "UNAUTHENTICATED",
		message: "ctxc: this server needs its own bearer token in the " + HeaderToken + " header (Authorization is the provider's)"}
}

// checkContentType refuses a POST whose body is not declared JSON: a browser
// sends text/plain and form posts across origins without asking first.
func checkContentType(r *http.Request) *refusal {
	if r.Method != http.MethodPost {
		return &refusal{status: http.StatusMethodNotAllowed, kind: kindInvalid, message: "ctxc: " + r.Method + " is not supported here; use POST"}
	}
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mediaType != "application/json" {
		return &refusal{status: http.StatusUnsupportedMediaType, kind: kindInvalid, param: "Content-Type", message: "ctxc: Content-Type must be application/json"}
	}
	return nil
}
