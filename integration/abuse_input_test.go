//go:build abuse

package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// inputDeadline is the deadline of every call of the input probe, and
// inputOverrun what a call may run past it.
const (
	inputDeadline = 10 * time.Second
	inputOverrun  = time.Second
)

// chatBodyOf is an OpenAI Chat Completions body of n short messages
// (24 MB for 800,000: under max_message_bytes, so that only the message
// limit and admission stop it).
func chatBodyOf(n int, content string) string {
	var b strings.Builder
	b.WriteString(`{"model":"gpt-4o","messages":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"role":"`)
		b.WriteString([]string{"user", "assistant"}[i%2])
		b.WriteString(`","content":`)
		c, _ := json.Marshal(content)
		b.Write(c)
		b.WriteByte('}')
	}
	b.WriteString(`]}`)
	return b.String()
}

// inputOutcomes tallies what the calls of one case got.
type inputOutcomes struct {
	mu      sync.Mutex
	counts  map[string]int
	slowest time.Duration // the longest call, as its client saw it
}

func (o *inputOutcomes) add(outcome string, took time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.counts == nil {
		o.counts = map[string]int{}
	}
	o.counts[outcome]++
	o.slowest = max(o.slowest, took)
}

func (o *inputOutcomes) String() string {
	var parts []string
	for k, n := range o.counts {
		parts = append(parts, fmt.Sprintf("%d %s", n, k))
	}
	return strings.Join(parts, ", ")
}

// grpcOutcome names a Compile's result: ok, or its code and reason.
func grpcOutcome(err error) string {
	if err == nil {
		return "OK"
	}
	st := status.Convert(err)
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return st.Code().String() + "/" + info.GetReason()
		}
	}
	return st.Code().String()
}

// inputCase is n concurrent calls of one body.
type inputCase struct {
	name string
	body string
	n    int
	// deadline is each call's (0: inputDeadline); the server's
	// proxy.timeout must be the same.
	deadline time.Duration
}

// within is the deadline of each of c's calls.
func (c inputCase) within() time.Duration {
	if c.deadline > 0 {
		return c.deadline
	}
	return inputDeadline
}

// compileInputs makes c's calls as Compiles with input_json over gRPC, each
// with its deadline.
func compileInputs(t *testing.T, s *server, c inputCase) *inputOutcomes {
	out := &inputOutcomes{}
	var wg sync.WaitGroup
	for range c.n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), c.within())
			defer cancel()
			start := time.Now()
			_, err := s.client().Compile(ctx, &ctxcv1.CompileRequest{State: &ctxcv1.AgentState{Model: &ctxcv1.ModelSpec{Name: "gpt-4o"}},
				InputFormat: ctxcv1.InputFormat_INPUT_FORMAT_OPENAI, InputJson: c.body}, grpc.MaxCallRecvMsgSize(64<<20))
			out.add(grpcOutcome(err), time.Since(start))
		})
	}
	wg.Wait()
	return out
}

// proxyInputs makes c's calls through the proxy's OpenAI endpoint, each
// giving up after its deadline plus what a call may run past it: the
// server's proxy.timeout is that deadline, so it must answer first.
func proxyInputs(t *testing.T, s *server, c inputCase) *inputOutcomes {
	out := &inputOutcomes{}
	var wg sync.WaitGroup
	for range c.n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), c.within()+inputOverrun)
			defer cancel()
			start := time.Now()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.httpAddr(t)+"/v1/chat/completions", strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				out.add("no answer ("+err.Error()+")", time.Since(start))
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			outcome := strconv.Itoa(resp.StatusCode) + " " + resp.Header.Get("X-Ctxc-Forwarded")
			if e := resp.Header.Get("X-Ctxc-Error"); e != "" {
				outcome += "/" + e
			}
			out.add(strings.TrimSpace(outcome), time.Since(start))
		})
	}
	wg.Wait()
	return out
}

// serverTimes are the longest the server worked on a Compile (its
// "finished call" log lines, the proxy's compiles among them) and on a
// proxied call ("proxied"), once it has logged wantCompiles and
// wantProxied of them (they are logged after the answer is written).
func serverTimes(t *testing.T, s *server, wantCompiles, wantProxied int) (compiles, proxied time.Duration) {
	t.Helper()
	logs := s.logs.String()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); logs = s.logs.String() {
		if strings.Count(logs, `"grpc.method":"Compile"`) >= wantCompiles && strings.Count(logs, `"msg":"proxied"`) >= wantProxied {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		switch line["msg"] {
		case "finished call":
			if line["grpc.method"] != "Compile" {
				continue
			}
			ms, _ := strconv.ParseFloat(fmt.Sprint(line["grpc.time_ms"]), 64)
			compiles = max(compiles, time.Duration(ms*float64(time.Millisecond)))
		case "proxied":
			d, _ := time.ParseDuration(fmt.Sprint(line["duration"]))
			proxied = max(proxied, d)
		}
	}
	return compiles, proxied
}

// probeInputJSON: logs sent as provider JSON (input_json, and so every
// proxied call) are admitted as states are. 6 calls of 99,999 messages and
// 4 of 800,000, over gRPC and through the proxy, with a 10 s deadline: each
// is refused or admitted within max_inflight_bytes (peak RSS within
// max_inflight_bytes + 300 MiB), and none runs more than 1 s past its
// deadline, at the default limits and with max_inflight_bytes raised so
// that a log of 99,999 messages is admitted (and compiled); then a 20 MB
// text without a space through the proxy, admitted, stops at the deadline.
func probeInputJSON(t *testing.T, report func(string, ...any)) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	}))
	defer up.Close()
	cases := []inputCase{
		{"6 × 99,999 messages", chatBodyOf(99_999, "hi"), 6, 0},
		{"4 × 800,000 messages", chatBodyOf(800_000, "hi"), 4, 0},
		// What the body's size is held for (compiler.InputCopies): a log of
		// long messages, under max_message_bytes.
		{"4 × 1,000 messages of 30 KB", chatBodyOf(1000, strings.Repeat("lorem ipsum dolor sit amet ", 1100)), 4, 0},
	}
	run := func(probe string, budget int64, extra ...string) {
		args := append([]string{"--http-listen", "127.0.0.1:0", "--proxy-openai-upstream", up.URL, "--proxy-timeout", inputDeadline.String(),
			"--max-inflight-bytes", strconv.FormatInt(budget, 10)}, extra...)
		s := startServerEnv(t, []string{"GOMEMLIMIT=" + strconv.FormatInt(budget+rssSlack, 10)}, args...)
		for _, c := range cases {
			for _, via := range []struct {
				name string
				call func(*testing.T, *server, inputCase) *inputOutcomes
			}{{"gRPC", compileInputs}, {"proxy", proxyInputs}} {
				out := via.call(t, s, c)
				report("%-24s %s as input_json via %s, %v deadline: %s; slowest answer %v; peak RSS so far %d MiB", probe, c.name, via.name, inputDeadline, out,
					out.slowest.Round(time.Millisecond), peakRSS(t, s.cmd.Process.Pid)>>20)
				if via.name == "proxy" && out.slowest > inputDeadline+inputOverrun {
					t.Errorf("%s via the proxy: an answer took %v", c.name, out.slowest)
				}
			}
		}
		var calls int
		for _, c := range cases {
			calls += c.n
		}
		compiles, proxied := serverTimes(t, s, 2*calls, calls)
		report("%-24s longest Compile %v, longest proxied call %v (bound: the %v deadline + %v)", probe, compiles.Round(time.Millisecond), proxied.Round(time.Millisecond), inputDeadline, inputOverrun)
		if compiles > inputDeadline+inputOverrun || proxied > inputDeadline+inputOverrun {
			t.Errorf("a call ran past its deadline: Compile %v, proxied %v", compiles, proxied)
		}
		// Requests being received are outside max_inflight_bytes (bounded
		// by max_concurrent_calls × max_message_bytes): each body is held
		// twice more while it arrives (gRPC's read buffers, or the proxy's
		// body and the request made of it) until it is decoded.
		var receiving int64
		for _, c := range cases {
			receiving = max(receiving, 2*int64(c.n)*int64(len(c.body)))
		}
		peak := peakRSS(t, s.cmd.Process.Pid)
		report("%-24s peak RSS %4d MiB (bound: max_inflight_bytes %d MiB + %d MiB + twice the bodies being received, %d MiB)", probe, peak>>20, budget>>20, rssSlack>>20, receiving>>20)
		if peak > budget+rssSlack+receiving {
			t.Errorf("peak RSS %d MiB", peak>>20)
		}
	}
	run("input-json", inflightBudget)
	// 512 MiB admits a log of 99,999 messages (256 MB with its working
	// memory) two at a time: admitted calls compile until their deadline.
	run("input-json-admitted", 512<<20)

	// A 20 MB text without a space holds 20 bytes a byte while it is
	// counted (400 MB): admitted under 1 GiB, it compiles for 7 s or more
	// on these cores, and must stop at its deadline, here 2 s, so that it
	// passes it however quiet the machine.
	const budget = 1 << 30
	const longRunDeadline = 2 * time.Second
	s := startServerEnv(t, []string{"GOMEMLIMIT=" + strconv.Itoa(budget+rssSlack)}, "--http-listen", "127.0.0.1:0", "--proxy-openai-upstream", up.URL,
		"--proxy-timeout", longRunDeadline.String(), "--max-inflight-bytes", strconv.Itoa(budget))
	longRun := inputCase{"a 20 MB text without a space", chatBodyOf(1, strings.Repeat("a", 20<<20)), 1, longRunDeadline}
	viaGRPC := compileInputs(t, s, longRun)
	out := proxyInputs(t, s, longRun)
	compiled, proxied := serverTimes(t, s, 2, 1)
	report("%-24s a 20 MB text without a space, %v deadline (max_inflight_bytes 1 GiB admits it): via gRPC %s, the Compile worked %v; via the proxy %s in %v, the proxied call %v (bound: the deadline + %v)",
		"input-json-long-run", longRunDeadline, viaGRPC, compiled.Round(time.Millisecond), out, out.slowest.Round(time.Millisecond), proxied.Round(time.Millisecond), inputOverrun)
	if out.counts["504 /COMPILE_DEADLINE_EXCEEDED"] != 1 || viaGRPC.counts["DeadlineExceeded"] != 1 || proxied > longRunDeadline+inputOverrun || compiled > longRunDeadline+inputOverrun {
		t.Errorf("want DEADLINE_EXCEEDED and one 504 COMPILE_DEADLINE_EXCEEDED within the deadline + %v, got %s and %s, worked %v and %v", inputOverrun, viaGRPC, out, compiled, proxied)
	}
}
