package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sony/gobreaker/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Request is one chat completion: a system instruction and one user message.
type Request struct {
	System string
	User   string
	// MaxOutputTokens caps the answer; 0 leaves it to the endpoint.
	MaxOutputTokens int
	// JSON asks for a JSON object answer (response_format json_object).
	JSON bool
}

// Response is a call's answer and what it consumed.
type Response struct {
	Text string
	// Model is the model the endpoint says answered (may differ from the request's).
	Model        string
	InputTokens  int
	OutputTokens int
	// Attempts is how many HTTP requests the call made (1 + retries).
	Attempts int
}

// Error kinds, reported as the span's error.type and in degraded reasons.
const (
	KindTimeout     = "timeout"
	KindRateLimited = "rate_limited"
	KindServer      = "server_error"
	KindConnection  = "connection_error"
	KindBreakerOpen = "breaker_open"
	KindClient      = "client_error"
	KindEmpty       = "empty_response"
	KindCanceled    = "canceled"
	KindTooLarge    = "reply_too_large"
)

// Completer is what the policies need of a model client; *Client implements it.
type Completer interface {
	Complete(ctx context.Context, req Request) (Response, error)
	Model() string
	ContextWindow() int
}

// Error is a failed call.
type Error struct {
	Kind     string
	Model    string
	Attempts int
	Err      error
}

// Error says what failed in words fit for a client: the model, the kind of
// failure and the endpoint's HTTP status, never the endpoint's URL or its
// text (Err has those, for the server's log).
func (e *Error) Error() string {
	var status *StatusError
	if errors.As(e.Err, &status) {
		return fmt.Sprintf("%s %s after %d attempt(s) (HTTP %d)", e.Model, e.Kind, e.Attempts, status.StatusCode)
	}
	return fmt.Sprintf("%s %s after %d attempt(s)", e.Model, e.Kind, e.Attempts)
}

func (e *Error) Unwrap() error { return e.Err }

// Stats count a client's work since start.
type Stats struct {
	Calls, Attempts, Retries, Failures int64
}

// Options are a client's collaborators.
type Options struct {
	// TracerProvider traces calls; nil traces nothing.
	TracerProvider trace.TracerProvider
	// Getenv reads the API key variable; nil uses os.Getenv.
	Getenv func(string) string
	// HTTPClient sends the requests; nil uses a client without its own timeout
	// (the call's context bounds it).
	HTTPClient *http.Client
	// BackoffBase and BackoffMax shape the retry delays (full jitter between 0
	// and min(BackoffMax, BackoffBase*2^retry)). Defaults 250ms and 5s.
	BackoffBase, BackoffMax time.Duration
	// Breakers shares circuit breakers between clients of one endpoint; nil
	// gives the client its own.
	Breakers *Breakers
	// Logger gets a failed call's detail (the endpoint's answer), which the
	// error itself leaves out; slog.Default() when nil.
	Logger *slog.Logger
}

// Client calls one model on one endpoint. It is safe for concurrent use.
type Client struct {
	cfg      Config
	http     *http.Client
	endpoint string // BaseURL + /chat/completions
	apiKey   string // "" sends no Authorization header
	tracer   trace.Tracer
	breaker  *gobreaker.CircuitBreaker[struct{}]
	log      *slog.Logger
	host     string
	port     int
	base     time.Duration
	maxDelay time.Duration

	calls, attempts, retries, failures atomic.Int64
}

// Breakers holds one circuit breaker per endpoint (base URL), so the planner
// and the summarizer on the same server see the same health.
type Breakers struct {
	mu sync.Mutex
	m  map[string]*gobreaker.CircuitBreaker[struct{}]
}

// NewBreakers returns an empty set.
func NewBreakers() *Breakers {
	return &Breakers{m: map[string]*gobreaker.CircuitBreaker[struct{}]{}}
}

func (b *Breakers) get(cfg Config) *gobreaker.CircuitBreaker[struct{}] {
	b.mu.Lock()
	defer b.mu.Unlock()
	key := strings.TrimRight(cfg.BaseURL, "/")
	if cb, ok := b.m[key]; ok {
		return cb
	}
	failures := uint32(cfg.BreakerFailures)
	cb := gobreaker.NewCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        key,
		MaxRequests: 1,
		Timeout:     cfg.BreakerCooldown,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= failures },
		// Only the endpoint's own failures count: a caller giving up or a
		// request the endpoint rejects says nothing about its health.
		IsSuccessful: func(err error) bool { return err == nil || !endpointFailure(err) },
	})
	b.m[key] = cb
	return cb
}

// New builds a client from a validated config. The API key is read here, once.
func New(cfg Config, opts Options) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	key := ""
	if cfg.APIKeyEnv != "" {
		key = getenv(cfg.APIKeyEnv)
		if key == "" {
			return nil, fmt.Errorf("api_key_env: environment variable %s is empty", cfg.APIKeyEnv)
		}
	}
	httpClient := opts.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	tp := opts.TracerProvider
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	breakers := opts.Breakers
	if breakers == nil {
		breakers = NewBreakers()
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	c := &Client{
		log:      log,
		cfg:      cfg,
		http:     httpClient,
		endpoint: strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions",
		apiKey:   key,
		tracer:   tp.Tracer("github.com/contextcompiler/ctxc/internal/llm"),
		breaker:  breakers.get(cfg),
		base:     opts.BackoffBase,
		maxDelay: opts.BackoffMax,
	}
	if c.base <= 0 {
		c.base = 250 * time.Millisecond
	}
	if c.maxDelay <= 0 {
		c.maxDelay = 5 * time.Second
	}
	if u, err := url.Parse(cfg.BaseURL); err == nil {
		c.host = u.Hostname()
		c.port, _ = strconv.Atoi(u.Port())
		if c.port == 0 {
			c.port = map[string]int{"http": 80, "https": 443}[u.Scheme]
		}
	}
	return c, nil
}

// Model is the configured model name.
func (c *Client) Model() string { return c.cfg.Model }

// ContextWindow is the model's own window in tokens.
func (c *Client) ContextWindow() int { return c.cfg.ContextWindow }

// Stats returns the client's counters.
func (c *Client) Stats() Stats {
	return Stats{Calls: c.calls.Load(), Attempts: c.attempts.Load(), Retries: c.retries.Load(), Failures: c.failures.Load()}
}

// BreakerOpen reports whether the endpoint's breaker refuses calls now.
func (c *Client) BreakerOpen() bool { return c.breaker.State() == gobreaker.StateOpen }

// Complete sends one chat completion, retrying retryable failures while the
// deadline allows. It ends early enough to leave FallbackReserve of the
// caller's remaining time to the caller. Errors are *Error.
func (c *Client) Complete(ctx context.Context, req Request) (Response, error) {
	c.calls.Add(1)
	timeout := c.cfg.Timeout
	if deadline, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Duration(float64(time.Until(deadline))*(1-c.cfg.FallbackReserve)))
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ctx, span := c.tracer.Start(ctx, "chat "+c.cfg.Model, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("gen_ai.operation.name", "chat"),
			attribute.String("gen_ai.system", c.cfg.Provider),
			attribute.String("gen_ai.provider.name", c.cfg.Provider),
			attribute.String("gen_ai.request.model", c.cfg.Model),
			attribute.String("server.address", c.host),
			attribute.Int("server.port", c.port),
		))
	defer span.End()
	if req.MaxOutputTokens > 0 {
		span.SetAttributes(attribute.Int("gen_ai.request.max_tokens", req.MaxOutputTokens))
	}

	resp, err := c.withRetries(ctx, req)
	span.SetAttributes(attribute.Int("ctxc.llm.attempts", resp.Attempts))
	if err != nil {
		c.failures.Add(1)
		var e *Error
		errors.As(err, &e)
		span.SetAttributes(attribute.String("error.type", e.Kind))
		span.SetStatus(codes.Error, e.Kind)
		c.logFailure(ctx, e)
		return resp, err
	}
	span.SetAttributes(
		attribute.String("gen_ai.response.model", resp.Model),
		attribute.Int("gen_ai.usage.input_tokens", resp.InputTokens),
		attribute.Int("gen_ai.usage.output_tokens", resp.OutputTokens),
	)
	return resp, nil
}

// logFailure logs what Error leaves out: the endpoint and its answer.
func (c *Client) logFailure(ctx context.Context, e *Error) {
	c.log.WarnContext(ctx, "helper model call failed", "model", c.cfg.Model, "endpoint", c.cfg.BaseURL, "kind", e.Kind,
		"attempts", e.Attempts, "error", truncate(e.Err.Error(), 1000))
}

// truncate cuts s to at most n bytes for a log line.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

func (c *Client) withRetries(ctx context.Context, req Request) (Response, error) {
	body := chatRequest{
		Model:    c.cfg.Model,
		Messages: []chatMessage{{Role: "system", Content: req.System}, {Role: "user", Content: req.User}},
		// max_tokens, not max_completion_tokens: Ollama, vLLM and LiteLLM all honour it.
		MaxTokens: req.MaxOutputTokens,
	}
	if req.JSON {
		body.ResponseFormat = &responseFormat{Type: "json_object"}
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return Response{}, &Error{Kind: KindClient, Model: c.cfg.Model, Err: err}
	}
	var out Response
	for attempt := 0; ; attempt++ {
		out.Attempts = attempt + 1
		c.attempts.Add(1)
		var completion *chatResponse
		_, err := c.breaker.Execute(func() (struct{}, error) {
			var err error
			completion, err = c.post(ctx, payload)
			return struct{}{}, err
		})
		if err == nil {
			if len(completion.Choices) == 0 || strings.TrimSpace(completion.Choices[0].Message.Content) == "" {
				return out, &Error{Kind: KindEmpty, Model: c.cfg.Model, Attempts: out.Attempts, Err: errors.New("no content in the answer")}
			}
			out.Text = completion.Choices[0].Message.Content
			out.Model = completion.Model
			out.InputTokens = completion.Usage.PromptTokens
			out.OutputTokens = completion.Usage.CompletionTokens
			return out, nil
		}
		kind, retryable, after := classify(ctx, err)
		if !retryable || attempt >= c.cfg.MaxRetries {
			return out, &Error{Kind: kind, Model: c.cfg.Model, Attempts: out.Attempts, Err: err}
		}
		delay := c.backoff(attempt, after)
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < delay {
			// Waiting would outlive the deadline: fail now rather than later.
			return out, &Error{Kind: kind, Model: c.cfg.Model, Attempts: out.Attempts, Err: fmt.Errorf("%w (retry in %v would pass the deadline)", err, delay)}
		}
		c.retries.Add(1)
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			kind, _, _ := classify(ctx, ctx.Err())
			return out, &Error{Kind: kind, Model: c.cfg.Model, Attempts: out.Attempts, Err: ctx.Err()}
		case <-timer.C:
		}
	}
}

// backoff is the wait before retry number attempt+1: the server's Retry-After
// when it gave one, else full jitter over an exponentially growing cap.
func (c *Client) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return retryAfter
	}
	ceiling := c.base << attempt
	if ceiling <= 0 || ceiling > c.maxDelay {
		ceiling = c.maxDelay
	}
	return time.Duration(rand.Int64N(int64(ceiling) + 1))
}

// classify names a failure, says whether retrying may help and how long the
// server asked to wait.
func classify(ctx context.Context, err error) (kind string, retryable bool, retryAfter time.Duration) {
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return KindBreakerOpen, false, 0
	}
	if errors.Is(err, errReplyTooLarge) {
		return KindTooLarge, false, 0
	}
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		if errors.Is(ctx.Err(), context.Canceled) {
			return KindCanceled, false, 0
		}
		return KindTimeout, false, 0
	}
	var apiErr *StatusError
	if errors.As(err, &apiErr) {
		switch code := apiErr.StatusCode; {
		case code == http.StatusTooManyRequests:
			return KindRateLimited, true, parseRetryAfter(apiErr.RetryAfter)
		case code == http.StatusRequestTimeout:
			return KindTimeout, true, 0
		case code >= 500:
			return KindServer, true, parseRetryAfter(apiErr.RetryAfter)
		default:
			return KindClient, false, 0
		}
	}
	var netErr net.Error
	var urlErr *url.Error
	if errors.As(err, &netErr) || errors.As(err, &urlErr) {
		return KindConnection, true, 0
	}
	// A body that does not decode (a proxy's HTML page) is the endpoint's fault.
	return KindServer, false, 0
}

// endpointFailure reports whether err says the endpoint is unhealthy.
func endpointFailure(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	var apiErr *StatusError
	if errors.As(err, &apiErr) {
		return apiErr.StatusCode == http.StatusTooManyRequests || apiErr.StatusCode == http.StatusRequestTimeout || apiErr.StatusCode >= 500
	}
	return true
}

// parseRetryAfter reads a Retry-After value (seconds or an HTTP date); 0 when absent.
func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}
