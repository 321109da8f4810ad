package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/service"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// call is one proxied request on its way through.
type call struct {
	p     *Proxy
	ep    Endpoint
	base  *url.URL
	w     http.ResponseWriter
	r     *http.Request
	start time.Time
	// model is the model the path names (Gemini); the others name it in the body.
	model string
	body  []byte

	// What the compile said, for the response headers, the log and metrics.
	profile               string
	tokensBefore, after   int
	compacted, compiled   bool
	compileTime, upstream time.Duration
	outcome, reason       string
	status                int
	// needed and available are a context's tokens that must be kept and
	// the usable window, when the context cannot fit.
	needed, available int
}

// read checks the request and reads its body.
func (c *call) read() *refusal {
	if rf := checkContentType(c.r); rf != nil {
		return rf
	}
	limit := int64(c.p.cfg.MaxBodyBytes)
	if limit <= 0 {
		limit = 1 << 62
	}
	tooLarge := &refusal{status: http.StatusRequestEntityTooLarge, kind: kindTooLarge, reason: agentstate.ReasonLimitExceeded,
		message: fmt.Sprintf("ctxc: the request body is larger than max_message_bytes (%d bytes)", limit)}
	// A body that says it is too large is refused before a byte of it is read.
	if c.r.ContentLength > limit {
		return tooLarge
	}
	body, err := readBody(http.MaxBytesReader(c.w, c.r.Body, limit), c.r.ContentLength, limit)
	var over *http.MaxBytesError
	switch {
	case errors.As(err, &over):
		return tooLarge
	case err != nil:
		return &refusal{status: http.StatusBadRequest, kind: kindInvalid, message: "ctxc: the request body could not be read"}
	}
	c.body = body
	return nil
}

// firstBodyBuffer is the buffer a body is first read into.
const firstBodyBuffer = 64 << 10

// readBody reads a body into a buffer that grows with what has arrived
// (doubling, so at most twice what was received), never past its announced
// length or limit: what a client declares costs nothing until it sends it,
// so slow bodies that announce 30 MB and trickle hold what they sent. r
// enforces limit (http.MaxBytesReader); net/http ends a body at its
// announced length and reports one that ends early, as readBody does for any r.
func readBody(r io.Reader, length, limit int64) ([]byte, error) {
	size := int64(firstBodyBuffer)
	if length > 0 {
		size = min(size, length)
	}
	body := make([]byte, 0, size)
	for {
		if len(body) == cap(body) {
			more := int64(cap(body))
			if length > int64(len(body)) {
				more = min(more, length-int64(len(body)))
			}
			if limit > 0 {
				more = min(more, max(0, limit-int64(len(body))))
			}
			// At the announced length or the limit, a little room to see the end.
			grown := make([]byte, len(body), int64(len(body))+max(more, 512))
			copy(grown, body)
			body = grown
		}
		n, err := r.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
		if err == io.EOF {
			if length > 0 && int64(len(body)) != length {
				return nil, io.ErrUnexpectedEOF
			}
			return body, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// request is the Compile request of the call: the body as input_json,
// rendered back into itself, with the provider of the endpoint, the
// profile and the window the caller caps.
func (c *call) request() (*ctxcv1.CompileRequest, *refusal) {
	// The compile reads the rest of the model from the body: its name, its
	// answer limit (the reservation) and Ollama's num_ctx (the window).
	model := &ctxcv1.ModelSpec{Name: c.model, Provider: c.ep.Upstream.provider()}
	opts := &ctxcv1.CompileOptions{RenderIntoInput: true}
	window := c.p.cfg.MaxContextTokens
	if v := c.r.Header.Get(HeaderMaxContextTokens); v != "" {
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 31)
		if err != nil || n == 0 {
			return nil, &refusal{status: http.StatusBadRequest, kind: kindInvalid, param: HeaderMaxContextTokens, reason: "INVALID_ARGUMENT",
				message: fmt.Sprintf("ctxc: %s must be a number of tokens from 1 to 2147483647, got %q", HeaderMaxContextTokens, v)}
		}
		window = int(n)
	}
	if window > 0 {
		w := uint32(window)
		opts.MaxContextTokenCount = &w
	}
	profile := c.p.cfg.Profile
	if p, ok := c.p.cfg.Profiles[c.ep.Upstream]; ok && p != "" {
		profile = p
	}
	if p := strings.TrimSpace(c.r.Header.Get(HeaderProfile)); p != "" {
		profile = p
	}
	return &ctxcv1.CompileRequest{State: &ctxcv1.AgentState{Model: model}, Profile: profile, Options: opts,
		InputFormat: c.ep.format, InputJson: string(c.body)}, nil
}

// compile compiles the body through the gRPC server and returns what to
// forward, or ctxc's refusal.
func (c *call) compile(ctx context.Context) ([]byte, *refusal) {
	req, rf := c.request()
	if rf != nil {
		return nil, rf
	}
	md := service.ClientMetadata(c.r, c.p.cfg.TrustedProxies)
	if token := strings.TrimSpace(c.r.Header.Get(HeaderToken)); token != "" {
		md.Set("authorization", "Bearer "+token)
	}
	began := time.Now()
	resp, err := c.p.compiler.Compile(metadata.NewOutgoingContext(ctx, md), req)
	c.compileTime = time.Since(began)
	if err != nil && (status.Code(err) == codes.DeadlineExceeded || ctx.Err() != nil) {
		return nil, c.compileTimedOut(ctx)
	}
	if err != nil {
		return c.compileFailed(err)
	}
	c.compiled, c.profile = true, resp.GetReport().GetProfile()
	c.after, c.compacted = int(resp.GetBudget().GetUsedTokenCount()), resp.GetReport().GetCompacted()
	c.tokensBefore = tokensBefore(resp)
	if resp.GetRendered() == "" { // the context as the client sent it
		c.outcome = OutcomeUnchanged
		return c.body, nil
	}
	c.outcome = OutcomeRewritten
	return []byte(resp.GetRendered()), nil
}

// tokensBefore is the context's size before planning and compaction: what
// the budget stage measured, else the estimate stage, else what was sent.
func tokensBefore(resp *ctxcv1.CompileResponse) int {
	for _, stage := range []string{"budget", "estimate"} {
		for _, s := range resp.GetReport().GetStages() {
			if s.GetStage() == stage {
				return int(s.GetTokensOut())
			}
		}
	}
	return int(resp.GetBudget().GetUsedTokenCount())
}

// compileFailed turns a failed compile into ctxc's refusal, or, for a
// failure that is not one (a body ctxc cannot read, an unknown model, an
// outage) with on_compile_error forward, into the client's body unchanged.
func (c *call) compileFailed(err error) ([]byte, *refusal) {
	st := status.Convert(err)
	var info *errdetails.ErrorInfo
	var retry time.Duration
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			info = d
		case *errdetails.RetryInfo:
			retry = d.GetRetryDelay().AsDuration()
		}
	}
	c.reason = info.GetReason()
	if c.reason == "" {
		c.reason = st.Code().String()
	}
	switch {
	case st.Code() == codes.Unauthenticated:
		rf := unauthenticated()
		rf.reason = c.reason
		return nil, rf
	case c.reason == service.ReasonOverloaded:
		return nil, overloaded("ctxc: the server is busy; retry shortly", retry)
	case c.reason == service.ReasonQuotaExceeded:
		// The caller is at its own quota: never forwarded past it.
		rf := overloaded("ctxc: "+st.Message(), retry)
		rf.reason = c.reason
		return nil, rf
	case c.reason == agentstate.ReasonContextIrreducible:
		needed, available := info.GetMetadata()["needed_tokens"], info.GetMetadata()["available_tokens"]
		c.needed, _ = strconv.Atoi(needed)
		c.available, _ = strconv.Atoi(available)
		// The service's message names each part that must be kept with its
		// size: the client learns what to shorten.
		detail := "what must be kept does not fit the window"
		if _, d, ok := strings.Cut(st.Message(), " available: "); ok {
			detail = d
		}
		return nil, &refusal{status: http.StatusBadRequest, kind: kindContextLength, param: conversationParam(c.ep), reason: c.reason,
			message: fmt.Sprintf("prompt is too long: %s tokens > %s maximum (ctxc: %s)", needed, available, detail)}
	case c.reason == agentstate.ReasonUnknownProfile:
		return nil, &refusal{status: http.StatusBadRequest, kind: kindInvalid, param: HeaderProfile, reason: c.reason,
			message: "ctxc: " + st.Message()}
	case c.p.cfg.OnCompileError == OnErrorRefuse:
		return nil, &refusal{status: http.StatusInternalServerError, kind: kindCompile, reason: c.reason,
			message: "ctxc could not compile this request (" + c.reason + "); on_compile_error is refuse"}
	}
	c.outcome = OutcomeUncompiled
	return c.body, nil
}

// ReasonCompileDeadline is the X-Ctxc-Error and the log's reason of a call
// whose compile passed the call's deadline: ctxc's time, not the upstream's.
const ReasonCompileDeadline = "COMPILE_DEADLINE_EXCEEDED"

// compileTimedOut is ctxc's refusal of a call whose compile passed its
// deadline (proxy.timeout, or the server's max_call_timeout): never
// forwarded, since the call has no time left for the upstream, and never
// blamed on it. A client that went away is answered the same; nobody
// reads it.
func (c *call) compileTimedOut(ctx context.Context) *refusal {
	c.reason = ReasonCompileDeadline
	message := fmt.Sprintf("ctxc: compiling the context took longer than the call's deadline (stopped after %s); nothing was sent upstream",
		c.compileTime.Round(time.Millisecond))
	if errors.Is(ctx.Err(), context.Canceled) {
		c.reason = "CLIENT_CANCELED"
		message = "ctxc: the client went away while its context was compiled; nothing was sent upstream"
	}
	return &refusal{status: http.StatusGatewayTimeout, kind: kindCompileTimeout, reason: c.reason, message: message}
}

// conversationParam names the body field of the conversation, OpenAI's param.
func conversationParam(ep Endpoint) string {
	switch ep.format {
	case ctxcv1.InputFormat_INPUT_FORMAT_OPENAI_RESPONSES:
		return "input"
	case ctxcv1.InputFormat_INPUT_FORMAT_GEMINI:
		return "contents"
	}
	return "messages"
}

// refuse answers with ctxc's refusal in the provider's shape.
func (c *call) refuse(rf *refusal) {
	c.outcome, c.status = OutcomeRefused, rf.status
	if c.reason == "" {
		c.reason = rf.reason
	}
	c.ctxcHeaders()
	writeError(c.w, c.ep.Upstream, rf)
}

// ctxcHeaders says on the response what ctxc did.
func (c *call) ctxcHeaders() {
	h := c.w.Header()
	if c.outcome != OutcomeRefused {
		h.Set(headerForwarded, c.outcome)
	}
	if c.reason != "" {
		h.Set(headerError, c.reason)
	}
	if !c.compiled {
		return
	}
	h.Set(headerProfile, c.profile)
	h.Set(headerTokensBefore, strconv.Itoa(c.tokensBefore))
	h.Set(headerTokensAfter, strconv.Itoa(c.after))
	h.Set(headerCompacted, strconv.FormatBool(c.compacted))
}

// forward sends body to the upstream and copies its answer back as it
// arrives, flushing after every read so that a stream streams.
func (c *call) forward(ctx context.Context, body []byte) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.upstreamURL(), bytes.NewReader(body))
	if err != nil {
		c.refuse(&refusal{status: http.StatusBadGateway, kind: kindUpstream, message: "ctxc: the upstream request could not be made"})
		return
	}
	copyHeaders(req.Header, c.r.Header, true)
	if !credentialsAllowed(c.base) {
		for _, k := range credentialHeaders {
			req.Header.Del(k)
		}
		if q := req.URL.Query(); q.Has(credentialParam) {
			q.Del(credentialParam)
			req.URL.RawQuery = q.Encode()
		}
	}
	sent := time.Now()
	resp, err := c.p.client.Do(req)
	if err != nil {
		c.outcome, c.reason = OutcomeUpstreamFailed, "UPSTREAM_UNREACHABLE"
		if c.r.Context().Err() != nil {
			return // the client went away; nobody reads an answer
		}
		c.refuse(&refusal{status: http.StatusBadGateway, kind: kindUpstream, reason: c.reason,
			message: "ctxc: the " + string(c.ep.Upstream) + " upstream did not answer (" + transportFailure(err) + ")"})
		c.outcome = OutcomeUpstreamFailed
		return
	}
	defer resp.Body.Close()
	c.upstream, c.status = time.Since(sent), resp.StatusCode
	if c.p.observer != nil {
		c.p.observer.UpstreamAnswered(string(c.ep.Upstream), c.ep.Name, c.upstream)
	}
	copyHeaders(c.w.Header(), resp.Header, false)
	c.ctxcHeaders()
	c.w.WriteHeader(resp.StatusCode)
	atEventEnd, err := copyFlushing(c.w, resp.Body)
	if errors.Is(err, errUpstreamRead) && c.r.Context().Err() == nil {
		c.outcome, c.reason = OutcomeUpstreamFailed, "UPSTREAM_BROKE_OFF"
		message := "ctxc: the " + string(c.ep.Upstream) + " upstream broke off its answer"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			c.reason = "PROXY_TIMEOUT"
			message = "ctxc: the answer ran past proxy.timeout (" + c.p.cfg.Timeout.String() + ")"
		}
		// Anthropic's stream has an event for this, which its SDK raises
		// with the message; it goes only between two events, where it
		// cannot be read as part of one.
		if c.ep.Upstream == Anthropic && atEventEnd && isEventStream(resp.Header) {
			writeAnthropicStreamError(c.w, message)
		}
		// The client must see the answer as broken. Ended cleanly, an answer
		// cut short reads as a whole one: a 200 whose stream merely stops,
		// which SDKs hand over as complete. Aborting the handler closes an
		// HTTP/1.1 connection without the chunked body's last chunk and
		// resets an HTTP/2 stream, which every client raises as an error.
		// (call.finish, deferred, still logs and counts the call.)
		panic(http.ErrAbortHandler)
	}
}

// isEventStream reports whether an answer is server-sent events.
func isEventStream(h http.Header) bool {
	mediaType, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mediaType == "text/event-stream"
}

// writeAnthropicStreamError writes Anthropic's in-stream error event and
// flushes it.
func writeAnthropicStreamError(w http.ResponseWriter, message string) {
	data, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": message}})
	_, _ = fmt.Fprintf(w, "event: error\ndata: %s\n\n", data)
	_ = http.NewResponseController(w).Flush()
}

// upstreamURL is the upstream's base URL joined with the request's path
// and query (which may hold Gemini's key: it is never logged).
func (c *call) upstreamURL() string {
	u := *c.base
	u.Path = strings.TrimSuffix(c.base.Path, "/") + c.r.URL.Path
	u.RawPath = ""
	if c.base.RawPath != "" || c.r.URL.RawPath != "" {
		u.RawPath = strings.TrimSuffix(c.base.EscapedPath(), "/") + c.r.URL.EscapedPath()
	}
	u.RawQuery = c.r.URL.RawQuery
	return u.String()
}

// credentialHeaders carry a caller's provider credentials, and so does
// Gemini's query parameter credentialParam.
var credentialHeaders = []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key", "Api-Key"}

const credentialParam = "key"

// credentialsAllowed reports whether credentials may go to base: over TLS,
// or to this machine.
func credentialsAllowed(base *url.URL) bool {
	if base.Scheme == "https" {
		return true
	}
	host := base.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hopHeaders belong to one connection, never forwarded (RFC 9110 7.6.1).
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// copyHeaders copies src into dst but for the hop-by-hop headers (and those
// Connection names), Host, Content-Length, and, for a request, ctxc's own.
func copyHeaders(dst, src http.Header, request bool) {
	skip := map[string]bool{"Host": true, "Content-Length": true}
	for _, h := range hopHeaders {
		skip[h] = true
	}
	for _, v := range src.Values("Connection") {
		for _, name := range strings.Split(v, ",") {
			skip[http.CanonicalHeaderKey(strings.TrimSpace(name))] = true
		}
	}
	for k, vs := range src {
		if skip[k] || request && strings.HasPrefix(k, ctxcHeaderPrefix) {
			continue
		}
		dst[k] = append([]string(nil), vs...)
	}
}

// errUpstreamRead marks copyFlushing's errors that are the upstream's (its
// answer broke off or timed out), not the client's.
var errUpstreamRead = errors.New("reading the upstream's answer")

// copyFlushing copies the upstream's answer to the client, flushing after
// every read. It reports whether what it copied ends with a blank line (the
// end of a server-sent event), where another event may follow.
func copyFlushing(w http.ResponseWriter, body io.Reader) (atEventEnd bool, err error) {
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	var tail []byte // the last bytes copied, up to 4
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return false, werr
			}
			if ferr := rc.Flush(); ferr != nil && !errors.Is(ferr, http.ErrNotSupported) {
				return false, ferr
			}
			tail = append(tail, buf[max(0, n-4):n]...)
			tail = tail[max(0, len(tail)-4):]
		}
		atEventEnd = bytes.HasSuffix(tail, []byte("\n\n")) || bytes.HasSuffix(tail, []byte("\r\n\r\n")) || bytes.HasSuffix(tail, []byte("\r\r"))
		if err == io.EOF {
			return atEventEnd, nil
		}
		if err != nil {
			return atEventEnd, fmt.Errorf("%w: %w", errUpstreamRead, err)
		}
	}
}

// transportFailure says why the upstream did not answer without the URL
// (whose query may hold a key).
func transportFailure(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Op + " failed"
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return "name not resolved"
	}
	return "connection failed"
}

// finish logs the call and tells the observer.
func (c *call) finish() {
	if c.outcome == "" {
		c.outcome = OutcomeRefused
	}
	if o := c.p.observer; o != nil {
		o.Proxied(string(c.ep.Upstream), c.ep.Name, c.outcome)
		if c.compiled && c.outcome != OutcomeRefused {
			o.Compiled(string(c.ep.Upstream), c.tokensBefore, c.after, c.compacted)
		}
	}
	attrs := []any{"upstream", string(c.ep.Upstream), "endpoint", c.ep.Name, "outcome", c.outcome, "status", c.status,
		"client", service.ClientAddress(c.r, c.p.cfg.TrustedProxies), "duration", time.Since(c.start).Round(time.Microsecond).String()}
	if !c.compiled && c.compileTime > 0 {
		attrs = append(attrs, "compile", c.compileTime.Round(time.Microsecond).String())
	}
	if c.compiled {
		attrs = append(attrs, "profile", c.profile, "tokens_before", c.tokensBefore, "tokens_after", c.after, "compacted", c.compacted,
			"compile", c.compileTime.Round(time.Microsecond).String())
	}
	if c.upstream > 0 {
		attrs = append(attrs, "upstream_headers", c.upstream.Round(time.Microsecond).String())
	}
	if c.reason != "" {
		attrs = append(attrs, "reason", c.reason)
	}
	if c.needed > 0 {
		// What the caller must shorten, as the refusal says.
		attrs = append(attrs, "needed_tokens", c.needed, "available_tokens", c.available)
	}
	c.p.log.Info("proxied", attrs...)
}
