//go:build integration

package integration

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/llm/llmtest"
	"github.com/contextcompiler/ctxc/internal/summarycache/redistest"
)

// TestTemplateAmplificationRefused: a 1.1 MB Compile whose system prompt holds
// 200,000 placeholders with a 100 KB value once made the server allocate until
// it died. It must be refused as over the message limit, with the server's
// peak memory far below what the expansion would need, and the server must go
// on serving.
func TestTemplateAmplificationRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	req := &ctxcv1.CompileRequest{
		State: &ctxcv1.AgentState{
			Model:   &ctxcv1.ModelSpec{Name: "gpt-4o"},
			Context: &ctxcv1.AgentContext{SystemPrompt: strings.Repeat("{{a}}", 200_000), Messages: []*ctxcv1.Message{{Id: "u1", Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: "hi"}}}}}},
		},
		Options: &ctxcv1.CompileOptions{TemplateVariables: map[string]string{"a": strings.Repeat("x", 100_000)}},
	}
	_, err := s.client().Compile(context.Background(), req)
	wantStatus(t, err, codes.ResourceExhausted, "LIMIT_EXCEEDED")

	resp, err := healthpb.NewHealthClient(s.conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("after the request: health %v, %v", resp.GetStatus(), err)
	}
	if peak := peakRSS(t, s.cmd.Process.Pid); peak > 1<<30 {
		t.Errorf("peak RSS %d MiB: the expansion was built", peak>>20)
	}
}

// peakRSS reads a process's peak resident set size (VmHWM) in bytes.
func peakRSS(t testing.TB, pid int) int64 {
	t.Helper()
	return procStatus(t, pid, "VmHWM:")
}

// procStatus reads a size in kB from /proc/<pid>/status, in bytes.
func procStatus(t testing.TB, pid int, field string) int64 {
	t.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc status", field)
	return 0
}

// largeCompile is the coding-agent example with an old tool output of size
// bytes, which compaction clamps: real work over a large request.
func largeCompile(t testing.TB, size int, tag string) *ctxcv1.CompileRequest {
	t.Helper()
	req := readExample(t, "coding-agent.json")
	line := "ok  \tgithub.com/acme/store/internal/" + tag + "\t0.012s coverage: 81.2% of statements\n"
	req.State.Context.Messages[5].Parts[0].GetToolResult().Content = strings.Repeat(line, size/len(line))
	return req
}

// overloaded reports whether err is admission control's refusal: RESOURCE_EXHAUSTED
// with reason OVERLOADED and a retry hint.
func overloaded(err error) bool {
	st := status.Convert(err)
	var reason string
	var retry bool
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			reason = d.GetReason()
		case *errdetails.RetryInfo:
			retry = d.GetRetryDelay().AsDuration() > 0
		}
	}
	return st.Code() == codes.ResourceExhausted && reason == "OVERLOADED" && retry
}

// TestLargeRequestsStayUnderInflightBytes: 16 concurrent 20 MiB Compiles once
// took 1.3 GB. With 64 MiB of requests worked on at once, the rest wait
// their turn or are refused with a retry hint, and memory stays bounded.
func TestLargeRequestsStayUnderInflightBytes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("moves 320 MiB of requests")
	}
	const inflight = 64 << 20
	s := startServer(t, "--max-inflight-bytes", strconv.Itoa(inflight), "--max-queue-wait", "2s", "--max-concurrent-calls", "8")
	baseline := currentRSS(t, s.cmd.Process.Pid)
	var (
		wg                 sync.WaitGroup
		mu                 sync.Mutex
		ok, refused        int
		failures           []error
		sizes              = 20 << 20
		concurrentRequests = 16
	)
	for i := range concurrentRequests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := largeCompile(t, sizes, strconv.Itoa(i))
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			_, err := s.client().Compile(ctx, req, grpc.MaxCallSendMsgSize(64<<20), grpc.MaxCallRecvMsgSize(64<<20))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case overloaded(err):
				refused++
			default:
				failures = append(failures, err)
			}
		}()
	}
	wg.Wait()
	for _, err := range failures {
		t.Errorf("a call failed other than by admission: %v", err)
	}
	peak := peakRSS(t, s.cmd.Process.Pid)
	t.Logf("%d compiled, %d refused with a retry hint; RSS %d MiB before, peak %d MiB", ok, refused, baseline>>20, peak>>20)
	if ok == 0 {
		t.Error("no large request was served")
	}
	// At most 8 requests are received at once (160 MiB, held raw and
	// decoded), of which at most 64 MiB are worked on; measured 552 MiB.
	if ceiling := int64(800 << 20); peak > ceiling {
		t.Errorf("peak RSS %d MiB, want under %d MiB", peak>>20, ceiling>>20)
	}
}

// currentRSS reads a process's resident set size (VmRSS) in bytes.
func currentRSS(t *testing.T, pid int) int64 {
	t.Helper()
	return procStatus(t, pid, "VmRSS:")
}

// TestLargeCountTokensDoNotStarveSmallCalls: four 20 MiB CountTokens once took
// 1.9 GB and slowed a small probe 50-fold. They are admitted within the
// in-flight bytes like any call, and a small call beside them is served.
func TestLargeCountTokensDoNotStarveSmallCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 80 MiB of requests")
	}
	s := startServer(t, "--max-inflight-bytes", strconv.Itoa(48<<20), "--max-queue-wait", "100ms")
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	text := strings.Repeat("func (s *Store) Reserve(ctx context.Context, sku string, n int) error { return nil }\n", (20<<20)/85)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.client().CountTokens(context.Background(), &ctxcv1.CountTokensRequest{Counter: &ctxcv1.CountTokensRequest_Model{Model: "gpt-4o"}, Texts: []string{text}})
			errs <- err
		}()
	}
	probe := &ctxcv1.CountTokensRequest{Counter: &ctxcv1.CountTokensRequest_Model{Model: "gpt-4o"}, Texts: []string{"Hello, world!"}}
	for range 20 {
		resp, err := s.client().CountTokens(context.Background(), probe)
		if err != nil || resp.GetTotalTokenCount() != 4 {
			t.Fatalf("the small probe: %v %v", resp, err)
		}
	}
	wg.Wait()
	close(errs)
	var ok int
	for err := range errs {
		switch {
		case err == nil:
			ok++
		case !overloaded(err):
			t.Errorf("a large CountTokens failed other than by admission: %v", err)
		}
	}
	peak := peakRSS(t, s.cmd.Process.Pid)
	t.Logf("%d of 4 large counts served; peak RSS %d MiB", ok, peak>>20)
	if ok == 0 {
		t.Error("no large count was served")
	}
	if ceiling := int64(600 << 20); peak > ceiling {
		t.Errorf("peak RSS %d MiB, want under %d MiB", peak>>20, ceiling>>20)
	}
}

// llmConfig writes a config whose summarizer is at url (with the call
// timeout and retries given) and whose profile "llm-compact" uses it; extra
// is more of the file.
func llmConfig(t *testing.T, url, timeout string, retries int, extra string) string {
	t.Helper()
	return writeConfig(t, `
models:
  summarizer:
    model: gpt-4o-mini
    base_url: `+url+`
    timeout: `+timeout+`
    max_retries: `+strconv.Itoa(retries)+`
`+extra+`
profiles:
  - name: llm-compact
    stages:
      - policy: normalize
      - policy: project
      - policy: estimate
      - policy: token_budget
      - policy: llm_summarize
      - policy: truncate
      - policy: repair
`)
}

// compactDegraded compacts the coding-agent example with llm-compact and
// returns llm_summarize's degraded reason ("" when not degraded).
func compactDegraded(t *testing.T, s *server, ctx context.Context, tag string) (string, error) {
	t.Helper()
	window := uint32(2000)
	req := readExample(t, "coding-agent.json")
	req.State.Context.Messages[3].Parts[0].GetToolResult().Content += "\n" + tag // a span of its own: no cached summary
	resp, err := s.client().Compact(ctx, &ctxcv1.CompactRequest{State: req.GetState(), Profile: "llm-compact", Options: &ctxcv1.CompileOptions{MaxContextTokenCount: &window}})
	if err != nil {
		return "", err
	}
	for _, st := range resp.GetReport().GetStages() {
		if st.GetPolicy() == "llm_summarize" && st.GetDegraded() {
			return st.GetDegradedReason(), nil
		}
	}
	return "", nil
}

// TestHelperModelFailuresFallBack: a helper model answering 200 MiB once drove
// the server to 4.9 GB; one that hangs ate the caller's deadline; a failure's
// reason showed the model's internal URL. Now the answer is read through
// max_reply_bytes, the call leaves a share of the deadline to the
// deterministic fallback, and the reason names the failure only.
func TestHelperModelFailuresFallBack(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewServer(t)
	s := startServer(t, "--config", llmConfig(t, fake.URL, "30s", 0, ""))
	host := strings.TrimPrefix(strings.TrimSuffix(fake.URL, "/v1"), "http://")

	var reasons []string
	fake.Script(func(llmtest.Received) llmtest.Reply { return llmtest.Reply{Content: strings.Repeat("x", 24<<20)} })
	reason, err := compactDegraded(t, s, context.Background(), "huge")
	reasons = append(reasons, reason)
	if err != nil || !strings.Contains(reason, "gpt-4o-mini reply_too_large after 1 attempt(s)") {
		t.Errorf("a 24 MiB answer: %v, reason %q; want the fallback, degraded with reply_too_large", err, reason)
	}
	if peak := peakRSS(t, s.cmd.Process.Pid); peak > 400<<20 {
		t.Errorf("peak RSS %d MiB: the answer was read", peak>>20)
	}

	fake.Script(func(llmtest.Received) llmtest.Reply { return llmtest.Reply{Delay: time.Minute, Content: "late"} })
	// A quarter of the deadline (fallback_reserve) is left to the fallback:
	// 2.5 s of 10, as 1.25 s of 5 was not always enough on a loaded CI
	// machine running the package's tests eight at a time.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reason, err = compactDegraded(t, s, ctx, "hang")
	reasons = append(reasons, reason)
	if err != nil || !strings.Contains(reason, "gpt-4o-mini timeout after 1 attempt(s)") {
		t.Errorf("a hanging model with a 10s deadline: %v, reason %q; want the fallback, degraded with timeout", err, reason)
	}

	fake.Script(func(llmtest.Received) llmtest.Reply { return llmtest.Reply{Status: http.StatusBadGateway} })
	reason, err = compactDegraded(t, s, context.Background(), "502")
	reasons = append(reasons, reason)
	if err != nil || !strings.Contains(reason, "gpt-4o-mini server_error after 1 attempt(s) (HTTP 502)") {
		t.Errorf("a 502: %v, reason %q", err, reason)
	}
	fake.Close()
	reason, err = compactDegraded(t, s, context.Background(), "gone")
	if err != nil || reason == "" {
		t.Errorf("an endpoint that is gone: %v, reason %q", err, reason)
	}
	for _, r := range append(reasons, reason) {
		if strings.Contains(r, host) || strings.Contains(r, "scripted") || strings.Contains(r, "http") {
			t.Errorf("the degraded reason %q shows the endpoint or its answer", r)
		}
	}
	if !s.hasLog(host) {
		t.Errorf("the server log should have the endpoint for the operator:\n%s", s.logs)
	}
}

// TestAPIKeyNeverSentInPlainText: a key for an http:// endpoint that is not
// loopback stops start-up.
func TestAPIKeyNeverSentInPlainText(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "ctxc.yaml")
	if err := os.WriteFile(config, []byte("models:\n  planner:\n    model: m\n    base_url: http://10.9.8.7:8000/v1\n    api_key_env: CTXC_TEST_KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ctxcBinary, "serve", "--listen", "127.0.0.1:0", "--config", config)
	cmd.Env = append(os.Environ(), "CTXC_TEST_KEY=sk-secret")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "api_key_env: the key in CTXC_TEST_KEY would travel in plain text to 10.9.8.7:8000") || strings.Contains(string(out), "sk-secret") {
		t.Errorf("exit %v, output:\n%s", err, out)
	}
}

// TestRedisOutageDoesNotMultiplyModelCalls: a Redis outage once turned every
// summary lookup into a model call (6 calls before, 401 after). Summaries
// already made are served from the in-process cache in front of Redis.
func TestRedisOutageDoesNotMultiplyModelCalls(t *testing.T) {
	t.Parallel()
	redis := redistest.Start(t)
	fake := llmtest.NewServer(t)
	fake.Script(func(llmtest.Received) llmtest.Reply { return llmtest.Reply{Content: "## Goal\nFix TestReserveStock."} })
	s := startServer(t, "--config", llmConfig(t, fake.URL, "30s", 0, "summary_cache:\n  redis_url: "+redis.URL+"\n"))
	for range 3 {
		if reason, err := compactDegraded(t, s, context.Background(), "same"); err != nil || reason != "" {
			t.Fatalf("%v %q", err, reason)
		}
	}
	before := fake.Calls()
	redis.Kill()
	for range 10 {
		if reason, err := compactDegraded(t, s, context.Background(), "same"); err != nil || reason != "" {
			t.Fatalf("with Redis down: %v %q", err, reason)
		}
	}
	if after := fake.Calls(); after != before || before == 0 {
		t.Errorf("model calls: %d with Redis up, %d after 10 more compactions with it down; want no more", before, after)
	}
	for _, line := range strings.Split(s.logs.String(), "\n") {
		if !strings.HasPrefix(line, "{") {
			t.Errorf("a line not from the service's JSON log (go-redis's own?): %q", line)
		}
	}
}

// cpuSeconds is the CPU time (user and system) process pid has used.
func cpuSeconds(t *testing.T, pid int) float64 {
	t.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	user, _ := strconv.Atoi(f[11])
	system, _ := strconv.Atoi(f[12])
	return float64(user+system) / 100 // clock ticks of 1/100 s (USER_HZ on Linux)
}

// smallMessages is a gpt-4o state of n short alternating messages.
func smallMessages(n int) *ctxcv1.AgentState {
	st := &ctxcv1.AgentState{SchemaVersion: 1, Model: &ctxcv1.ModelSpec{Name: "gpt-4o"}, Context: &ctxcv1.AgentContext{SystemPrompt: "Be brief."}}
	for i := range n {
		role := ctxcv1.Role_ROLE_USER
		if i%2 == 1 {
			role = ctxcv1.Role_ROLE_ASSISTANT
		}
		st.Context.Messages = append(st.Context.Messages, &ctxcv1.Message{Id: "m" + strconv.Itoa(i), Role: role,
			Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: "message number " + strconv.Itoa(i) + " says hello"}}}})
	}
	return st
}

// TestAbandonedCallsStopWorking: compiles that outlive their deadline stop
// working when it passes. Two Compiles of 50,000 messages, each needing many
// seconds of summarizing, get DEADLINE_EXCEEDED at 1.5 s; the server then
// used both cores for tens of seconds more. Now it is idle soon after, and
// serves the next call.
func TestAbandonedCallsStopWorking(t *testing.T) {
	state := smallMessages(50_000)
	// Room for both in max_inflight_bytes: cancellation is under test, not admission.
	s := startServer(t, "--max-message-bytes", strconv.Itoa(64<<20), "--max-inflight-bytes", strconv.Itoa(512<<20))
	pid := s.cmd.Process.Pid
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
			defer cancel()
			_, err := s.client().Compile(ctx, &ctxcv1.CompileRequest{State: state, Profile: "budget-aware"})
			if status.Code(err) != codes.DeadlineExceeded {
				t.Errorf("%v, want DEADLINE_EXCEEDED (the test needs a compile longer than its deadline)", err)
			}
		}()
	}
	wg.Wait()
	// What is under way when the deadline passes ends within a second; the
	// two seconds after that must be all but idle.
	time.Sleep(time.Second)
	select {
	case <-s.exited: // rather than a missing /proc entry, say how it ended
		t.Fatalf("the server exited after its callers had gone: %v\n%s", s.exitErr, s.logs)
	default:
	}
	before := cpuSeconds(t, pid)
	time.Sleep(2 * time.Second)
	if used := cpuSeconds(t, pid) - before; used > 0.3 {
		t.Errorf("the server used %.2f s of CPU in the 2 s after its callers had gone, want all but none", used)
	}
	if _, err := s.client().ListProfiles(context.Background(), &ctxcv1.ListProfilesRequest{}); err != nil {
		t.Error(err)
	}
}

// holdSockets opens n TCP connections to addr from the loopback address
// from (not the test client's 127.0.0.1) that send nothing, redialling any
// the server closes, until the test ends.
func holdSockets(t *testing.T, addr, from string, n int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: time.Second}
	opened := make(chan struct{}, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			for ctx.Err() == nil {
				c, err := d.DialContext(ctx, "tcp", addr)
				if first {
					opened <- struct{}{}
					first = false
				}
				if err != nil {
					time.Sleep(100 * time.Millisecond)
					continue
				}
				// Held until the server closes it (a read returns) or the test ends.
				stop := context.AfterFunc(ctx, func() { c.Close() })
				_, _ = c.Read(make([]byte, 1))
				stop()
				c.Close()
			}
		}()
	}
	for range n {
		<-opened
	}
}

// holdHealthConnections opens n gRPC connections to addr from the loopback
// address from, each making one health check (which needs no token) and
// then held open until the test ends.
func holdHealthConnections(t *testing.T, addr, from string, n int) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	var wg sync.WaitGroup
	for range n {
		conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) { return d.DialContext(ctx, "tcp", a) }))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, _ = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
		}()
	}
	wg.Wait()
}

// TestOneClientCannotTakeEveryConnection: a thousand connections from one
// address that made a health check (no token needed) and stay open, and
// idle sockets redialled as the server closes them, once took every
// connection slot and locked every other client out (its dial timed out).
// Each address now holds at most max_connections_per_address connections
// on each port: a client from another address connects and calls on both
// ports as before. Without the per-address limit (clients from many
// addresses), the oldest connection that has made no authenticated call
// gives its slot to a newcomer; one that has made one keeps it.
func TestOneClientCannotTakeEveryConnection(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("agent 0123456789abcdef0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const connections, sockets = 1000, 1000
	calls := func(s *server, n int) (worked int, slowest time.Duration) {
		for range n {
			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer 0123456789abcdef0123")
			conn, err := grpc.NewClient("passthrough:///"+s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			_, grpcErr := ctxcv1.NewContextCompilerServiceClient(conn).ListProfiles(ctx, &ctxcv1.ListProfilesRequest{})
			conn.Close()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.httpAddr(t)+"/ctxc.v1.ContextCompilerService/ListProfiles", strings.NewReader("{}"))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer 0123456789abcdef0123")
			resp, httpErr := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
			cancel()
			if grpcErr == nil && httpErr == nil && resp.StatusCode == http.StatusOK {
				worked++
			}
			if resp != nil {
				resp.Body.Close()
			}
			slowest = max(slowest, time.Since(start))
		}
		return worked, slowest
	}

	s := startServer(t, "--auth-token-file", tokens, "--http-listen", "127.0.0.1:0")
	holdHealthConnections(t, s.addr, "127.0.0.2", connections)
	holdSockets(t, s.addr, "127.0.0.2", sockets)
	holdSockets(t, s.httpAddr(t), "127.0.0.2", sockets)
	if worked, slowest := calls(s, 10); worked != 10 {
		t.Errorf("with %d connections and %d idle sockets from another address, %d of 10 calls on both ports worked", connections, sockets, worked)
	} else {
		t.Logf("10 of 10 calls on new connections worked; the slowest took %v", slowest)
	}

	// From many addresses (here without the per-address limit), health
	// connections fill max_connections; a client with a token still gets
	// in, each newcomer taking the slot of the oldest unauthenticated one.
	open := startServer(t, "--auth-token-file", tokens, "--http-listen", "127.0.0.1:0", "--max-connections-per-address", "0")
	holdHealthConnections(t, open.addr, "127.0.0.3", connections)
	if worked, _ := calls(open, 2); worked != 2 {
		t.Errorf("with max_connections filled by health connections, %d of 2 calls worked", worked)
	}
	if !open.hasLog("connection closed to make room") {
		t.Error("no health connection was closed to make room: this test no longer fills max_connections")
	}
	// Connections that have made an authenticated call keep their slots:
	// with every slot held by one, a newcomer waits (its call times out).
	full := startServer(t, "--auth-token-file", tokens, "--http-listen", "127.0.0.1:0", "--max-connections-per-address", "0", "--max-connections", "20")
	for range 20 {
		conn, err := grpc.NewClient("passthrough:///"+full.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer 0123456789abcdef0123")
		if _, err := ctxcv1.NewContextCompilerServiceClient(conn).ListProfiles(ctx, &ctxcv1.ListProfilesRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	if worked, _ := calls(full, 1); worked != 0 {
		t.Error("a newcomer got in past 20 authenticated connections in 20 slots")
	}
}
