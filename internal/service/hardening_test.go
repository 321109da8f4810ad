package service

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/adapter"
	"github.com/contextcompiler/ctxc/internal/adapter/stateblob"
)

func writeTokenFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTokenFile(t *testing.T) {
	const tok = "0123456789abcdef"
	tests := []struct {
		name, content string
		wantErrs      []string // one substring per reported problem
	}{
		{"names and tokens with comments", "# callers\nagent-php " + tok + "\n\n  ci@build " + tok + "x  \n", nil},
		{"every bad line at once", "a\nb@ short\nbad/name " + tok + "z\nc " + tok + "\nc " + tok + "y\nd " + tok + "\n",
			[]string{`:1: want "<name> <token>", got 1 fields`, `:2: the token of "b@" has 5 characters; use at least 16`, `:3: name "bad/name"`,
				`:5: name "c" is already on line 4`, `:6: the token of "d" is already on line 4`}},
		{"no tokens", "# nobody\n", []string{"no tokens"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadTokens(writeTokenFile(t, tt.content), slog.New(slog.DiscardHandler))
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if len(got) != len(tt.wantErrs) {
				t.Fatalf("errors %q, want %d", got, len(tt.wantErrs))
			}
			for i, want := range tt.wantErrs {
				if !strings.Contains(got[i], want) {
					t.Errorf("error %q, want it to contain %q", got[i], want)
				}
				if strings.Contains(got[i], tok) {
					t.Errorf("error %q shows a token", got[i])
				}
			}
		})
	}
}

func TestTokensAuthenticateAndReload(t *testing.T) {
	path := writeTokenFile(t, "alice aaaaaaaaaaaaaaaa\nbob bbbbbbbbbbbbbbbb\n")
	tokens, err := LoadTokens(path, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	check := func(token, wantName string, wantOK bool) {
		t.Helper()
		if name, ok := tokens.Authenticate(token); name != wantName || ok != wantOK {
			t.Errorf("Authenticate(%q) = %q %v, want %q %v", token, name, ok, wantName, wantOK)
		}
	}
	check("bbbbbbbbbbbbbbbb", "bob", true)
	check("bbbbbbbbbbbbbbb", "", false)
	check("", "", false)

	// Revoke bob, add carol; the next look after a second sees it.
	now := time.Now()
	tokens.file.now = func() time.Time { return now }
	if err := os.WriteFile(path, []byte("alice aaaaaaaaaaaaaaaa\ncarol cccccccccccccccc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * reloadInterval)
	check("bbbbbbbbbbbbbbbb", "", false)
	check("cccccccccccccccc", "carol", true)

	// A file that no longer parses keeps what was loaded.
	if err := os.WriteFile(path, []byte("broken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * reloadInterval)
	check("cccccccccccccccc", "carol", true)
}

// TestTokenFileRevokesAllAndWarnsOnce: a token file rewritten to hold only
// comments revokes every token; an empty one (being written) or a broken
// one keeps what was loaded, and a failure that lasts is logged once, then
// once a minute, not on every look.
func TestTokenFileRevokesAllAndWarnsOnce(t *testing.T) {
	path := writeTokenFile(t, "alice aaaaaaaaaaaaaaaa\n")
	logs := &lockedBuffer{}
	tokens, err := LoadTokens(path, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tokens.file.now = func() time.Time { return now }
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	alice := func() bool {
		now = now.Add(2 * reloadInterval)
		_, ok := tokens.Authenticate("aaaaaaaaaaaaaaaa")
		return ok
	}

	write("")
	for range 20 { // 40 seconds of looks at an empty file
		if !alice() {
			t.Fatal("an empty token file revoked the tokens")
		}
	}
	if n := strings.Count(logs.String(), "reloading auth token file failed"); n != 1 {
		t.Errorf("a lasting failure logged %d times in 40s, want once:\n%s", n, logs.String())
	}
	for range 15 { // past the minute
		alice()
	}
	if n := strings.Count(logs.String(), "reloading auth token file failed"); n != 2 {
		t.Errorf("a failure lasting over a minute logged %d times, want twice", n)
	}

	write("# every token revoked, 2026-11-25\n")
	if alice() {
		t.Error("a token file of comments only kept alice's token")
	}
	if !strings.Contains(logs.String(), "holds no token") {
		t.Errorf("revoking every token was not logged:\n%s", logs.String())
	}
	write("alice aaaaaaaaaaaaaaaa\n")
	if !alice() {
		t.Error("a token added back was refused")
	}
}

func bearer(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

func TestAuthentication(t *testing.T) {
	tokens, err := LoadTokens(writeTokenFile(t, "agent-1 0123456789abcdef\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := start(t, TransportConfig{Tokens: tokens})
	ctx := context.Background()
	for name, ctx := range map[string]context.Context{
		"no token":       ctx,
		"wrong token":    bearer(ctx, "0123456789abcdeX"),
		"wrong scheme":   metadata.AppendToOutgoingContext(ctx, "authorization", "Basic 0123456789abcdef"),
		"a bare token":   metadata.AppendToOutgoingContext(ctx, "authorization", "0123456789abcdef"),
		"an empty token": bearer(ctx, ""),
	} {
		_, err := h.client.ListProfiles(ctx, &ctxcv1.ListProfilesRequest{})
		if st := status.Convert(err); st.Code() != codes.Unauthenticated || st.Message() != "unauthenticated" || len(st.Details()) != 0 {
			t.Errorf("%s: %v, want UNAUTHENTICATED without detail", name, err)
		}
	}
	if len(h.catalog.Requests()) != 0 {
		t.Error("an unauthenticated call reached the compiler")
	}
	if _, err := h.client.Compile(bearer(ctx, "0123456789abcdef"), &ctxcv1.CompileRequest{State: requestState()}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.logs.String(), "caller=agent-1") {
		t.Errorf("the call log does not name the caller:\n%s", h.logs.String())
	}
	if resp, err := h.health.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health without a token: %v %v", resp, err)
	}
}

// wantOverloaded checks the refusal of a busy server: RESOURCE_EXHAUSTED
// naming the limit, with a retry hint.
func wantOverloaded(t *testing.T, err error, limit string) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != codes.ResourceExhausted {
		t.Fatalf("%v, want RESOURCE_EXHAUSTED", err)
	}
	var info *errdetails.ErrorInfo
	var retry *errdetails.RetryInfo
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			info = d
		case *errdetails.RetryInfo:
			retry = d
		}
	}
	if info.GetReason() != ReasonOverloaded || info.GetMetadata()["limit"] != limit || retry.GetRetryDelay().AsDuration() != RetryDelay {
		t.Errorf("details %v %v, want OVERLOADED for %s and a %s retry hint", info, retry, limit, RetryDelay)
	}
}

func blockedCompile(h *harness, state *ctxcv1.AgentState) chan error {
	done := make(chan error, 1)
	go func() {
		_, err := h.client.Compile(context.Background(), &ctxcv1.CompileRequest{State: state, Profile: "block"})
		done <- err
	}()
	<-h.catalog.Started
	return done
}

// admissionRecord is an AdmissionObserver that keeps what it is told.
type admissionRecord struct {
	mu       sync.Mutex
	rejected []string // method limit
	inflight int64
}

func (r *admissionRecord) Rejected(method, limit string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rejected = append(r.rejected, method+" "+limit)
}

func (r *admissionRecord) AddInflightBytes(delta int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inflight += delta
}

func (r *admissionRecord) get() ([]string, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.rejected...), r.inflight
}

func TestMaxConcurrentCallsRefusesAtOnce(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxConcurrentCalls = 1
	record := &admissionRecord{}
	h := start(t, TransportConfig{Limits: lim, Admission: record})
	done := blockedCompile(h, requestState())
	_, err := h.client.ListProfiles(context.Background(), &ctxcv1.ListProfilesRequest{})
	wantOverloaded(t, err, "max_concurrent_calls")
	if rejected, _ := record.get(); !cmp.Equal(rejected, []string{"/ctxc.v1.ContextCompilerService/ListProfiles max_concurrent_calls"}) {
		t.Errorf("the observer was told of refusals %q", rejected)
	}
	if resp, err := h.health.Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health while busy: %v %v", resp, err)
	}
	h.catalog.Release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The slot is freed when the server has closed the call's stream, just
	// after the client has its answer.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, err := h.client.ListProfiles(context.Background(), &ctxcv1.ListProfilesRequest{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the first call ended: %v", err)
		}
	}
}

func TestInflightBytesQueueThenRefuse(t *testing.T) {
	big := requestState()
	big.Context.SystemPrompt = strings.Repeat("x", 6000)
	lim := DefaultLimits()
	lim.MaxInflightBytes, lim.MaxQueueWait = 20000, 100*time.Millisecond // a 6,000-byte prompt and 2 KiB for each of 3 messages
	record := &admissionRecord{}
	h := start(t, TransportConfig{Limits: lim, Admission: record})
	done := blockedCompile(h, big)
	if _, inflight := record.get(); inflight < 6000 || inflight > lim.MaxInflightBytes {
		t.Errorf("%d bytes in flight while a request with a 6,000-byte prompt runs", inflight)
	}

	// A second large request finds no room within the wait.
	_, err := h.client.Compile(context.Background(), &ctxcv1.CompileRequest{State: big})
	wantOverloaded(t, err, "max_inflight_bytes")
	if rejected, _ := record.get(); !cmp.Equal(rejected, []string{"/ctxc.v1.ContextCompilerService/Compile max_inflight_bytes"}) {
		t.Errorf("the observer was told of refusals %q", rejected)
	}
	// A small one fits beside the first.
	if _, err := h.client.Compile(context.Background(), &ctxcv1.CompileRequest{State: requestState()}); err != nil {
		t.Errorf("a small request beside the large one: %v", err)
	}
	h.catalog.Release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, inflight := record.get(); inflight != 0 {
		t.Errorf("%d bytes in flight after every call ended", inflight)
	}

	// With a longer wait, a second large request queues until the first ends.
	lim.MaxQueueWait = time.Minute
	h = start(t, TransportConfig{Limits: lim})
	done = blockedCompile(h, big)
	queued := make(chan error, 1)
	go func() {
		_, err := h.client.Compile(context.Background(), &ctxcv1.CompileRequest{State: big})
		queued <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if n := len(h.catalog.Requests()); n != 1 {
		t.Fatalf("%d requests reached the compiler while the first held the room, want 1", n)
	}
	h.catalog.Release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := <-queued; err != nil {
		t.Errorf("the queued request: %v", err)
	}
}

func TestCallDeadlines(t *testing.T) {
	lim := DefaultLimits()
	lim.DefaultCallTimeout, lim.MaxCallTimeout = 100*time.Millisecond, 200*time.Millisecond
	h := start(t, TransportConfig{Limits: lim})
	long, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	for name, ctx := range map[string]context.Context{
		"no deadline gets the default": context.Background(),
		"a long deadline is cut":       long,
	} {
		_, err := h.client.Compile(ctx, &ctxcv1.CompileRequest{State: requestState(), Profile: "block"})
		<-h.catalog.Started
		if status.Code(err) != codes.DeadlineExceeded {
			t.Errorf("%s: %v, want DEADLINE_EXCEEDED", name, err)
		}
	}
}

// rawCodec sends a request's bytes as they are, so a test can send what no
// protobuf library would encode.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error)      { return v.([]byte), nil }
func (rawCodec) Unmarshal(data []byte, v any) error { return nil }
func (rawCodec) Name() string                       { return "proto" }

func TestMalformedRequestIsInvalidArgument(t *testing.T) {
	h := start(t, TransportConfig{})
	// CountTokensRequest field 1 (texts) holding bytes that are not UTF-8.
	notUTF8 := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("caf\xe9"))
	for name, body := range map[string][]byte{
		"bad wire format": {0xff, 0xff, 0xff},
		"invalid UTF-8":   notUTF8,
	} {
		var out []byte
		err := h.conn.Invoke(context.Background(), "/ctxc.v1.ContextCompilerService/CountTokens", body, &out, grpc.ForceCodec(rawCodec{}))
		wantStatus(t, err, codes.InvalidArgument, adapter.ReasonMalformedRequest)
		if msg := status.Convert(err).Message(); !strings.HasPrefix(msg, "the request is not a valid protobuf message") || strings.Contains(msg, "grpc:") {
			t.Errorf("%s: message %q", name, status.Convert(err).Message())
		}
	}
	if !strings.Contains(h.logs.String(), "malformed request refused") {
		t.Errorf("not logged:\n%s", h.logs.String())
	}
}

func TestDrainKeepsServingWhileNotServing(t *testing.T) {
	h := start(t, TransportConfig{DrainDelay: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.transport.Drain(ctx)
	for healthStatus(t, h.transport, "") != healthpb.HealthCheckResponse_NOT_SERVING {
		time.Sleep(time.Millisecond)
	}
	if _, err := h.client.Compile(context.Background(), &ctxcv1.CompileRequest{State: requestState()}); err != nil {
		t.Errorf("a call during the drain delay: %v", err)
	}
}

func TestClientAddress(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32")}
	tests := []struct {
		name, remote string
		xff          []string
		want         string
	}{
		{"the connection's address", "192.0.2.1:5000", nil, "192.0.2.1"},
		{"an untrusted peer's X-Forwarded-For is ignored", "192.0.2.1:5000", []string{"198.51.100.7"}, "192.0.2.1"},
		{"a trusted proxy's client", "10.1.1.1:5000", []string{"198.51.100.7"}, "198.51.100.7"},
		{"through two proxies", "10.1.1.1:5000", []string{"198.51.100.7, 10.2.2.2"}, "198.51.100.7"},
		{"a forged first hop is not believed", "10.1.1.1:5000", []string{"203.0.113.9, 198.51.100.7"}, "198.51.100.7"},
		{"headers are one list", "127.0.0.1:5000", []string{"203.0.113.9", "198.51.100.7"}, "198.51.100.7"},
		{"garbage stops the walk", "10.1.1.1:5000", []string{"nonsense"}, "10.1.1.1"},
		{"only proxies", "10.1.1.1:5000", []string{"10.3.3.3"}, "10.1.1.1"},
	}
	for _, tt := range tests {
		r := &http.Request{RemoteAddr: tt.remote, Header: http.Header{}}
		for _, v := range tt.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := clientAddress(r, proxies); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestGatewayBrowserRules(t *testing.T) {
	base := startGateway(t, 1<<20, GatewayConfig{CORSOrigins: []string{"https://app.example.com"}, AllowedHosts: []string{"ctxc.example.com", "127.0.0.1"}})
	path := base + "/ctxc.v1.ContextCompilerService/ListProfiles"
	send := func(method, url string, header map[string]string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	type result struct {
		Code        int
		AllowOrigin string
	}
	tests := []struct {
		name   string
		method string
		header map[string]string
		want   result
	}{
		{"JSON", http.MethodPost, map[string]string{"Content-Type": "application/json; charset=utf-8"}, result{200, ""}},
		{"text/plain, as a cross-origin form sends it", http.MethodPost, map[string]string{"Content-Type": "text/plain", "Origin": "https://evil.example"}, result{415, ""}},
		{"no content type", http.MethodPost, nil, result{415, ""}},
		{"an allowed origin", http.MethodPost, map[string]string{"Content-Type": "application/json", "Origin": "https://app.example.com"}, result{200, "https://app.example.com"}},
		{"another origin is not allowed to read", http.MethodPost, map[string]string{"Content-Type": "application/json", "Origin": "https://evil.example"}, result{200, ""}},
		{"a preflight from the allowed origin", http.MethodOptions, map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}, result{204, "https://app.example.com"}},
		{"a preflight from another origin", http.MethodOptions, map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}, result{204, ""}},
		{"a rebinding Host", http.MethodPost, map[string]string{"Content-Type": "application/json", "Host": "evil.example:8080"}, result{403, ""}},
		{"an allowed Host with a port", http.MethodPost, map[string]string{"Content-Type": "application/json", "Host": "ctxc.example.com:8080"}, result{200, ""}},
	}
	for _, tt := range tests {
		resp := send(tt.method, path, tt.header)
		got := result{resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin")}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	if resp := send(http.MethodGet, base+"/healthz", map[string]string{"Host": "evil.example"}); resp.StatusCode != 200 {
		t.Errorf("/healthz with any Host: %d, want 200", resp.StatusCode)
	}
}

func TestGatewayWithoutCORSSendsNoCORSHeaders(t *testing.T) {
	base := startGateway(t, 1<<20, GatewayConfig{})
	req, _ := http.NewRequest(http.MethodOptions, base+"/ctxc.v1.ContextCompilerService/ListProfiles", nil)
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" || resp.StatusCode == http.StatusNoContent {
		t.Errorf("preflight answered %d with Access-Control-Allow-Origin %q; CORS is off by default", resp.StatusCode, got)
	}
}

// TestStateBlobsHoldWhatTheyDecompressTo: a compressed state blob is held in
// flight at its decompressed size before it is decompressed, so small blobs
// of large states cannot together exceed max_inflight_bytes. One blob of 3
// MiB of state (a few KiB on the wire) runs; a second finds no room.
func TestStateBlobsHoldWhatTheyDecompressTo(t *testing.T) {
	big := requestState()
	big.Context.SystemPrompt = strings.Repeat("x ", 3<<19) // words: one long piece would be refused (LongestPiece)
	blob, err := stateblob.Encode(big)
	if err != nil {
		t.Fatal(err)
	}
	if len(blob) > 64<<10 {
		t.Fatalf("a blob of %d bytes: the test needs one that compresses well", len(blob))
	}
	lim := DefaultLimits()
	lim.MaxInflightBytes, lim.MaxQueueWait = 4<<20, 100*time.Millisecond
	record := &admissionRecord{}
	h := start(t, TransportConfig{Limits: lim, Admission: record})
	done := make(chan error, 1)
	go func() {
		_, err := h.client.Compile(context.Background(), &ctxcv1.CompileRequest{StateBlob: blob, Profile: "block"})
		done <- err
	}()
	<-h.catalog.Started
	if _, inflight := record.get(); inflight < 3<<20 {
		t.Errorf("%d bytes in flight while a blob of a 3 MiB state runs, want at least 3 MiB", inflight)
	}
	_, err = h.client.Compile(context.Background(), &ctxcv1.CompileRequest{StateBlob: blob})
	wantOverloaded(t, err, "max_inflight_bytes")
	close(h.catalog.Release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, inflight := record.get(); inflight != 0 {
		t.Errorf("%d bytes still in flight after the calls ended", inflight)
	}
	if _, err := h.client.Compile(context.Background(), &ctxcv1.CompileRequest{StateBlob: blob}); err != nil {
		t.Errorf("the blob alone: %v", err)
	}
}

// A small request whose system prompt expands to many times its size holds
// what it expands to in max_inflight_bytes before the expansion is built:
// with another call taking most of the room, it is refused (OVERLOADED)
// rather than made.
func TestTemplateExpansionHeldBeforeItIsMade(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxInflightBytes, lim.MaxQueueWait = 4<<20, 100*time.Millisecond
	record := &admissionRecord{}
	h := start(t, TransportConfig{Limits: lim, Admission: record})
	big := requestState()
	big.Context.SystemPrompt = strings.Repeat("x ", 1800<<10) // 3.6 MB of words
	done := blockedCompile(h, big)

	req := &ctxcv1.CompileRequest{State: requestState(), Options: &ctxcv1.CompileOptions{
		TemplateVariables: map[string]string{"chunk": strings.Repeat("y", 200)}}}
	req.State.Context.SystemPrompt = strings.Repeat("{{chunk}}", 1<<10) // 10 KB expanding to 200 KB, held three times
	_, err := h.client.Compile(context.Background(), req)
	wantOverloaded(t, err, "max_inflight_bytes")
	if n := len(h.catalog.Requests()); n != 1 {
		t.Errorf("%d requests reached the pipeline, want only the blocked one", n)
	}
	h.catalog.Release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Alone, it fits.
	if _, err := h.client.Compile(context.Background(), req); err != nil {
		t.Fatalf("the same request with the room free: %v", err)
	}
}

// A run of text without a space is one piece to count, and counting it holds
// tokens.PieceWorkingBytes a byte: a state whose run could never be held in
// max_inflight_bytes, or a template whose expansion could not, is refused
// (RESOURCE_EXHAUSTED, the field named) before anything is counted; the same
// text with spaces is served.
func TestWorkThatCouldNeverBeHeldIsRefused(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxInflightBytes = 8 << 20
	h := start(t, TransportConfig{Limits: lim})
	run := requestState()
	run.Context.SystemPrompt = strings.Repeat("x", 1<<20)
	words := requestState()
	words.Context.SystemPrompt = strings.Repeat("x ", 1<<19)
	tmpl := &ctxcv1.CompileRequest{State: requestState(), Options: &ctxcv1.CompileOptions{
		TemplateVariables: map[string]string{"chunk": strings.Repeat("y ", 512)}}}
	tmpl.State.Context.SystemPrompt = strings.Repeat("{{chunk}}", 1<<10) // expands to 1 MiB
	// 5,000 messages need 10 MiB of working memory (2 KiB each), a blob
	// decompressing to 9 MiB its size: held whole or refused, never clamped
	// to the limit and let past it.
	many := requestState()
	for i := range 5000 {
		many.Context.Messages = append(many.Context.Messages, &ctxcv1.Message{Id: "n" + strconv.Itoa(i), Role: ctxcv1.Role_ROLE_USER,
			Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: "ok"}}}})
	}
	big := requestState()
	big.Context.Messages[0].Parts[0].Content = &ctxcv1.Part_Text{Text: strings.Repeat("a line of output, ", 9<<20/18)}
	blob, err := stateblob.Encode(big)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		req   *ctxcv1.CompileRequest
		field string
	}{
		{"a 1 MiB run without a space", &ctxcv1.CompileRequest{State: run}, "state (its longest run of text without a space"},
		{"5,000 messages", &ctxcv1.CompileRequest{State: many}, "state.context.messages"},
		{"a blob of a 9 MiB state", &ctxcv1.CompileRequest{StateBlob: blob}, "state_blob"},
		{"a template expanding to 1 MiB", tmpl, "options.template_variables"},
		{"1 MiB of words", &ctxcv1.CompileRequest{State: words}, ""},
	} {
		_, err := h.client.Compile(context.Background(), tt.req)
		st := status.Convert(err)
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.field != "" && (st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), tt.field)):
			t.Errorf("%s: %v, want RESOURCE_EXHAUSTED naming %s", tt.name, err, tt.field)
		}
	}
}
