//go:build abuse

package integration

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/adapter/stateblob"
)

// The abuse harness (make abuse): every probe of a hostile or careless
// client, each against its own server (the real binary, default limits), with
// the bound README "Running it safely" quotes. It measures wall-clock and
// memory, so it is not part of make test.
//
// Run: go test -tags integration,abuse -run TestAbuse -v -timeout 30m ./integration/
//
// Each server runs with GOMEMLIMIT at the bound, as a deployment sized by
// README "Deploying" does (the chart sets it from the container's limit):
// Go's collector would otherwise let the heap grow to twice what is live.

// inflightBudget is the servers' max_inflight_bytes (the default).
const inflightBudget = 128 << 20

// rssSlack is what a probe's peak RSS may exceed the in-flight budget by.
const rssSlack = 300 << 20

func TestAbuse(t *testing.T) {
	var figures []string
	report := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		figures = append(figures, line)
		t.Log(line)
	}
	t.Cleanup(func() {
		t.Logf("figures:\n%s", strings.Join(figures, "\n"))
	})
	t.Run("lock-out", func(t *testing.T) { probeLockOut(t, report) })
	t.Run("callers-leave", func(t *testing.T) { probeCallersLeave(t, report) })
	t.Run("blobs", func(t *testing.T) { probeBlobs(t, report) })
	t.Run("templates", func(t *testing.T) { probeTemplates(t, report) })
	t.Run("unread-replies", func(t *testing.T) { probeUnreadReplies(t, report) })
	t.Run("unauthenticated-bodies", func(t *testing.T) { probeUnauthenticatedBodies(t, report) })
	t.Run("proxy-unauthenticated-bodies", func(t *testing.T) { probeUnauthenticatedProxyBodies(t, report) })
	t.Run("input-json", func(t *testing.T) { probeInputJSON(t, report) })
	t.Run("refs-flood", func(t *testing.T) { probeRefsFlood(t, report) })
	t.Run("quota-flood", func(t *testing.T) { probeQuotaFlood(t, report) })
	t.Run("linear", func(t *testing.T) { probeLinear(t, report) })
	t.Run("open-metrics-and-long-errors", func(t *testing.T) { probeOpenMetricsAndErrors(t, report) })
}

const abuseToken = "0123456789abcdef0123"

func abuseTokens(t *testing.T) string {
	f := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(f, []byte("agent "+abuseToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func authed(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+abuseToken)
}

// startAbuseServer starts a server with GOMEMLIMIT at the probes' bound.
func startAbuseServer(t *testing.T, args ...string) *server {
	return startServerEnv(t, []string{"GOMEMLIMIT=" + strconv.Itoa(inflightBudget+rssSlack)}, args...)
}

// checkPeak fails when the server's peak RSS passed the budget plus slack.
func checkPeak(t *testing.T, s *server, report func(string, ...any), probe string) {
	peak := peakRSS(t, s.cmd.Process.Pid)
	report("%-24s peak RSS %4d MiB (bound: max_inflight_bytes %d MiB + %d MiB)", probe, peak>>20, inflightBudget>>20, rssSlack>>20)
	if peak > inflightBudget+rssSlack {
		t.Errorf("peak RSS %d MiB", peak>>20)
	}
}

// An authenticated client keeps working while 2,000 unauthenticated
// connections (health checks) and 2,000 idle sockets on each port are held
// from another address.
func probeLockOut(t *testing.T, report func(string, ...any)) {
	s := startAbuseServer(t, "--auth-token-file", abuseTokens(t), "--http-listen", "127.0.0.1:0")
	holdHealthConnections(t, s.addr, "127.0.0.2", 2000)
	holdSockets(t, s.addr, "127.0.0.3", 2000)
	holdSockets(t, s.httpAddr(t), "127.0.0.3", 2000)
	req := readExample(t, "chat.json")
	var latencies []time.Duration
	failed := 0
	for i := range 200 {
		start := time.Now()
		ctx, cancel := context.WithTimeout(authed(context.Background()), 5*time.Second)
		var err error
		if i%10 == 0 { // every tenth on a new connection
			conn, dialErr := grpc.NewClient("passthrough:///"+s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if dialErr != nil {
				t.Fatal(dialErr)
			}
			_, err = ctxcv1.NewContextCompilerServiceClient(conn).Compile(ctx, req)
			conn.Close()
		} else {
			_, err = s.client().Compile(ctx, req)
		}
		cancel()
		if err != nil {
			failed++
		}
		latencies = append(latencies, time.Since(start))
	}
	slices.Sort(latencies)
	p50, p99 := latencies[len(latencies)/2], latencies[len(latencies)*99/100]
	report("%-24s 200 authenticated Compiles beside 2,000 health connections and 2×2,000 idle sockets: %d failed, p50 %v, p99 %v (bound: p99 < 200ms)",
		"lock-out", failed, p50.Round(100*time.Microsecond), p99.Round(100*time.Microsecond))
	if failed > 0 || p99 >= 200*time.Millisecond {
		t.Errorf("%d failed, p99 %v", failed, p99)
	}
}

// Four Compiles of 100,000 messages with a 3 s deadline: once it passes the
// server is idle within a second, and its memory goes back.
func probeCallersLeave(t *testing.T, report func(string, ...any)) {
	// A log of 100,000 messages needs ~210 MB in flight: over the default
	// max_inflight_bytes it is refused at once, so the limit admits one.
	s := startAbuseServer(t, "--max-message-bytes", strconv.Itoa(64<<20), "--max-inflight-bytes", strconv.Itoa(256<<20))
	pid := s.cmd.Process.Pid
	var abandoned int
	st := smallMessages(100_000)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			_, err := s.client().Compile(ctx, &ctxcv1.CompileRequest{State: st, Profile: "budget-aware"}, grpc.MaxCallRecvMsgSize(64<<20))
			switch {
			case status.Code(err) == codes.DeadlineExceeded:
				abuseMu.Lock()
				abandoned++
				abuseMu.Unlock()
			case !overloaded(err): // each holds all of max_inflight_bytes: the others wait, then are refused
				t.Errorf("%v, want DEADLINE_EXCEEDED or OVERLOADED", err)
			}
		})
	}
	wg.Wait()
	if abandoned == 0 {
		t.Fatal("no compile outlived its deadline: the probe needs one")
	}
	atDeadline := currentRSS(t, pid)
	time.Sleep(time.Second)
	before := cpuSeconds(t, pid)
	time.Sleep(2 * time.Second)
	used := cpuSeconds(t, pid) - before
	time.Sleep(7 * time.Second)
	later := currentRSS(t, pid)
	report("%-24s 4 Compiles of 100,000 messages, 3 s deadline (%d abandoned, the rest refused OVERLOADED): CPU in the 2 s from 1 s after it %.2f s (bound: idle, < 0.2 s); RSS %d MiB at the deadline, %d MiB 10 s later",
		"callers-leave", abandoned, used, atDeadline>>20, later>>20)
	if used > 0.2 {
		t.Errorf("%.2f s of CPU after the callers left", used)
	}
	if later > atDeadline/2 {
		t.Errorf("RSS after the callers left: %d → %d MiB, want it at least halved", atDeadline>>20, later>>20)
	}
}

// 40 concurrent compressed state blobs of about 100 KB that decompress to
// 60 MB states each.
func probeBlobs(t *testing.T, report func(string, ...any)) {
	st := smallMessages(0)
	// 10,000 messages: with their working memory (2 KiB each) the state
	// fits in max_inflight_bytes alone; one of 100,000 would not, and is
	// refused naming the limit (TestWorkThatCouldNeverBeHeldIsRefused).
	line := strings.Repeat("the same line of a long tool output, again and again. ", 110)
	for i := range 10_000 {
		st.Context.Messages = append(st.Context.Messages, &ctxcv1.Message{Id: "m" + strconv.Itoa(i), Role: []ctxcv1.Role{ctxcv1.Role_ROLE_USER, ctxcv1.Role_ROLE_ASSISTANT}[i%2],
			Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: line}}}})
	}
	blob, err := stateblob.Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	s := startAbuseServer(t, "--max-message-bytes", strconv.Itoa(64<<20))
	refused, worked := runConcurrently(t, 40, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		_, err := s.client().Compile(ctx, &ctxcv1.CompileRequest{StateBlob: blob}, grpc.MaxCallRecvMsgSize(64<<20))
		return err
	})
	report("%-24s 40 blobs of %d KB decompressing to %d MB each: %d answered, %d refused OVERLOADED",
		"blobs", len(blob)>>10, proto.Size(st)>>20, worked, refused)
	checkPeak(t, s, report, "blobs")
}

// runConcurrently runs n calls at once and counts admission refusals and
// successes; any other error fails.
func runConcurrently(t *testing.T, n int, call func() error) (refused, worked int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			err := call()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				worked++
			case overloaded(err):
				refused++
			default:
				t.Errorf("%v", err)
			}
		})
	}
	wg.Wait()
	return refused, worked
}

// 20 concurrent 1 MB requests with 200,000 placeholders, and 40 small ones
// expanding to 20 MB each.
func probeTemplates(t *testing.T, report func(string, ...any)) {
	s := startAbuseServer(t)
	huge := &ctxcv1.CompileRequest{State: smallMessages(2), Options: &ctxcv1.CompileOptions{TemplateVariables: map[string]string{"a": strings.Repeat("x", 100_000)}}}
	huge.State.Context.SystemPrompt = strings.Repeat("{{a}}", 200_000)
	limited := 0
	runConcurrently(t, 20, func() error {
		_, err := s.client().Compile(context.Background(), huge)
		if status.Code(err) == codes.ResourceExhausted && !overloaded(err) {
			abuseMu.Lock()
			limited++
			abuseMu.Unlock()
			return nil
		}
		return err
	})
	large := &ctxcv1.CompileRequest{State: smallMessages(2), Options: &ctxcv1.CompileOptions{TemplateVariables: map[string]string{"a": strings.Repeat("x", 100_000)}}}
	large.State.Context.SystemPrompt = strings.Repeat("{{a}}", 200)
	unholdable := 0
	refused, worked := runConcurrently(t, 40, func() error {
		_, err := s.client().Compile(context.Background(), large, grpc.MaxCallRecvMsgSize(64<<20))
		st := status.Convert(err)
		switch {
		case st.Code() == codes.ResourceExhausted && strings.Contains(st.Message(), "irreducible"):
			return nil // the expanded prompt does not fit the window: answered
		case st.Code() == codes.ResourceExhausted && strings.Contains(st.Message(), "options.template_variables"):
			abuseMu.Lock()
			unholdable++ // its expansion needs more than max_inflight_bytes
			abuseMu.Unlock()
			return nil
		}
		return err
	})
	report("%-24s 20 requests expanding past max_message_bytes: %d refused LIMIT_EXCEEDED; 40 expanding to 20 MB: %d answered, %d refused as needing more than max_inflight_bytes, %d refused OVERLOADED",
		"templates", limited, worked-unholdable, unholdable, refused)
	if limited != 20 {
		t.Errorf("%d of 20 over-limit expansions refused", limited)
	}
	checkPeak(t, s, report, "templates")
}

var abuseMu sync.Mutex // guards the probes' counters shared with callbacks

// unreadClient opens an HTTP/2 connection that sends calls and never grants
// the server window for their replies.
func unreadClient(t *testing.T, addr string, method string, req proto.Message, calls int) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fr := http2.NewFramer(conn, conn)
	var wmu sync.Mutex
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				return
			}
			if s, ok := f.(*http2.SettingsFrame); ok && !s.IsAck() {
				wmu.Lock()
				_ = fr.WriteSettingsAck()
				wmu.Unlock()
			}
		}
	}()
	body, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, 5+len(body))
	binary.BigEndian.PutUint32(frame[1:5], uint32(len(body)))
	copy(frame[5:], body)
	var hdr bytes.Buffer
	enc := hpack.NewEncoder(&hdr)
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", method}, {":authority", "ctxc"},
		{"content-type", "application/grpc"}, {"te", "trailers"}} {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	wmu.Lock()
	defer wmu.Unlock()
	for i := range calls {
		time.Sleep(10 * time.Millisecond) // the server's receive window refills as it reads
		id := uint32(2*i + 1)
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hdr.Bytes(), EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
		if err := fr.WriteData(id, true, frame); err != nil {
			t.Fatal(err)
		}
	}
}

// Four connections, each with 100 calls whose replies are 8 MB, never read.
func probeUnreadReplies(t *testing.T, report func(string, ...any)) {
	s := startAbuseServer(t)
	// 14 KB (one HTTP/2 frame) expanding to 8 MB.
	req := &ctxcv1.CompileRequest{State: smallMessages(2), Options: &ctxcv1.CompileOptions{TemplateVariables: map[string]string{"a": strings.Repeat("x", 8<<10)}}}
	req.State.Context.SystemPrompt = strings.Repeat("{{a}}", 1<<10)
	for range 4 {
		unreadClient(t, s.addr, "/ctxc.v1.ContextCompilerService/Compile", req, 100)
	}
	time.Sleep(10 * time.Second)
	// Served meanwhile.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := s.client().Compile(ctx, readExample(t, "chat.json"))
	report("%-24s 4 connections × 100 calls with 8 MB replies never read: another client's Compile %v",
		"unread-replies", status.Code(err))
	if err != nil {
		t.Error(err)
	}
	checkPeak(t, s, report, "unread-replies")
}

// 20 concurrent 17 MB HTTP bodies without a token.
func probeUnauthenticatedBodies(t *testing.T, report func(string, ...any)) {
	s := startAbuseServer(t, "--auth-token-file", abuseTokens(t), "--http-listen", "127.0.0.1:0")
	body := bytes.Repeat([]byte(`{"state":{"context":{"systemPrompt":"`+strings.Repeat("x", 1<<20)+`"}}}`), 17)
	url := "http://" + s.httpAddr(t) + "/ctxc.v1.ContextCompilerService/Compile"
	var codesSeen sync.Map
	start := time.Now()
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			resp, err := http.Post(url, "application/json", bytes.NewReader(body))
			if err != nil {
				codesSeen.Store("error", true)
				return
			}
			resp.Body.Close()
			codesSeen.Store(strconv.Itoa(resp.StatusCode), true)
		})
	}
	wg.Wait()
	took := time.Since(start)
	var seen []string
	codesSeen.Range(func(k, _ any) bool { seen = append(seen, k.(string)); return true })
	report("%-24s 20 bodies of 17 MB without a token: answered %v in %v", "unauthenticated-bodies", seen, took.Round(time.Millisecond))
	if !slices.Equal(seen, []string{"401"}) && !slices.Equal(seen, []string{"401", "error"}) && !slices.Equal(seen, []string{"error", "401"}) {
		t.Errorf("answers %v, want 401", seen)
	}
	checkPeak(t, s, report, "unauthenticated-bodies")
}

// Compile of 100,000 small messages takes at most 12 times as long as 10,000
// (default profile), each the first Compile of a fresh server whose
// tokenizer has loaded, as a new session's would be; and for every built-in profile, doubling the log from
// 50,000 messages at most 2.5 times as long. (At 10,000 messages the log
// barely passes gpt-4o's window, so little is compacted; past it, each
// compaction costs about the window, and there are as many as the log is
// longer.)
func probeLinear(t *testing.T, report func(string, ...any)) {
	once := func(st *ctxcv1.AgentState, profile string) time.Duration {
		// Without GOMEMLIMIT: this probe is about time, and a heap near its
		// limit collects more often the larger it is.
		s := startServer(t, "--max-message-bytes", strconv.Itoa(64<<20), "--max-inflight-bytes", strconv.Itoa(1<<30))
		defer s.kill()
		// The tokenizer's tables load once, after SERVING: not the log's cost.
		if _, err := s.client().CountTokens(context.Background(), &ctxcv1.CountTokensRequest{Counter: &ctxcv1.CountTokensRequest_Model{Model: st.GetModel().GetName()}, Texts: []string{"warm"}}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := s.client().Compile(context.Background(), &ctxcv1.CompileRequest{State: st, Profile: profile}, grpc.MaxCallRecvMsgSize(64<<20)); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	// The median of fresh servers: one first call of a second or less varies
	// by a tenth from run to run, and the 10,000-message call by up to a
	// fifth, as much as the margin measured. Five for the default profile,
	// whose calls are short; three for the others.
	timed := func(st *ctxcv1.AgentState, profile string) time.Duration {
		n := 3
		if profile == "pragmatic" {
			n = 5
		}
		runs := make([]time.Duration, n)
		for i := range runs {
			runs[i] = once(st, profile)
		}
		slices.Sort(runs)
		return runs[n/2]
	}
	states := map[int]*ctxcv1.AgentState{10_000: smallMessages(10_000), 50_000: smallMessages(50_000), 100_000: smallMessages(100_000)}
	for _, profile := range []string{"pragmatic", "policy-driven", "budget-aware"} {
		a, b, c := timed(states[10_000], profile), timed(states[50_000], profile), timed(states[100_000], profile)
		tenfold, doubled := float64(c)/float64(a), float64(c)/float64(b)
		report("%-24s %s: 10,000 messages %v, 50,000 %v, 100,000 %v: 100,000/10,000 %.1fx (bound for the default profile: 12x), 100,000/50,000 %.1fx (bound: 2.5x)", "linear", profile,
			a.Round(time.Millisecond), b.Round(time.Millisecond), c.Round(time.Millisecond), tenfold, doubled)
		if profile == "pragmatic" && tenfold > 12 {
			t.Errorf("%s: 100,000/10,000 %.1fx", profile, tenfold)
		}
		if doubled > 2.5 {
			t.Errorf("%s: 100,000/50,000 %.1fx", profile, doubled)
		}
	}
}

// The metrics port refuses to start in the open; an error quoting a 1 MB
// message id stays under 1 KB.
func probeOpenMetricsAndErrors(t *testing.T, report func(string, ...any)) {
	out, err := exec.Command(ctxcBinary, "serve", "--listen", "127.0.0.1:0", "--metrics-listen", "0.0.0.0:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "metrics_listen: refusing to serve on 0.0.0.0:0") {
		t.Errorf("metrics in the open: %v\n%s", err, out)
	}
	s := startAbuseServer(t)
	st := smallMessages(2)
	st.Context.Messages[0].Id = strings.Repeat("i", 1<<20)
	st.Context.Messages[1].Id = st.Context.Messages[0].Id
	_, err = s.client().Compile(context.Background(), &ctxcv1.CompileRequest{State: st})
	msg := status.Convert(err).Message()
	report("%-24s metrics on 0.0.0.0 without TLS or tokens: refused to start; error for a 1 MB message id: %s, %d bytes (bound: 1,024)",
		"open-metrics, errors", status.Code(err), len(msg))
	if err == nil || len(msg) > 1024 {
		t.Errorf("%v: a status message of %d bytes", status.Code(err), len(msg))
	}
}
