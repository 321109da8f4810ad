//go:build abuse

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// Quota probe: one caller floods, another calls steadily.
const (
	quotaFloodLoops  = 8                     // the flooding caller's calls kept going at once
	quotaSteadyCalls = 100                   // the steady caller's Compiles in a row, one after another
	quotaRounds      = 5                     // rounds of quotaSteadyCalls in each condition, in turns
	quotaFloodQuota  = 1                     // the flooding caller's max_concurrent_calls
	quotaFloodRetry  = 10 * time.Millisecond // how soon the flood sends a refused call again
)

// quotaRun is what the steady caller saw on one server: its latencies
// alone, beside one call of the flood's at a time (its quota's worth of
// work, nothing refused), and under the whole flood.
type quotaRun struct {
	alone, beside, under []time.Duration
	failed               int
	admitted, refused    int64 // the flood's calls
}

// probeQuotaFlood: caller "agent" keeps 8 Compiles of 4 MB going at once,
// each sent again as soon as it is answered and 10 ms after it is refused
// (a hundredth of the retry delay it is told), on a server where
// its quota is 1 call at a time and 32 MiB in flight; caller "steady" (no
// quota) makes Compiles of a chat one after another: 100 alone, 100 beside
// one Compile of 4 MB at a time (what the flood's quota lets it do), 100
// under the whole flood, five times over. None of the steady caller's calls
// fails, and its p99 under the flood stays within 2x of its p99 beside the
// flood's quota's worth of work: the flood's calls past its quota cost the
// others nothing but their refusal. Its p99 alone is printed beside: on 2
// cores one Compile of 4 MB at a time (and the garbage collector's worker
// it keeps busy) takes a core, which no queueing can give back. The same
// flood on a server without quotas is measured too, to show what the quota
// spares.
func probeQuotaFlood(t *testing.T, report func(string, ...any)) {
	tokens := filepath.Join(t.TempDir(), "tokens")
	const steadyToken = "steady-0123456789abcdef"
	if err := os.WriteFile(tokens, []byte("agent "+abuseToken+"\nsteady "+steadyToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	flood := floodBody(t)
	steadyReq := readExample(t, "chat.json")

	// The conditions in turns, so that what else the machine does at the
	// time weighs on each alike.
	run := func(quotas string, rounds int) quotaRun {
		var r quotaRun
		args := []string{"--auth-token-file", tokens}
		if quotas != "" {
			args = append(args, "--config", writeConfig(t, quotas))
		}
		s := startAbuseServer(t, args...)
		dial := func() *grpc.ClientConn {
			conn, err := grpc.NewClient("passthrough:///"+s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			return conn
		}
		steadyConn, floodConn := dial(), dial()
		steady := ctxcv1.NewContextCompilerServiceClient(steadyConn)
		steadyCalls := func(n int) []time.Duration {
			var latencies []time.Duration
			for range n {
				ctx, cancel := context.WithTimeout(bearerCtx(steadyToken), 10*time.Second)
				start := time.Now()
				if _, err := steady.Compile(ctx, steadyReq); err != nil {
					r.failed++
					t.Logf("steady: %v", err)
				}
				latencies = append(latencies, time.Since(start))
				cancel()
			}
			return latencies
		}
		var ok, no atomic.Int64
		startFlood := func(loops int) (stop func()) {
			done := make(chan struct{})
			var wg sync.WaitGroup
			for range loops {
				wg.Go(func() {
					for {
						select {
						case <-done:
							return
						default:
						}
						ctx, cancel := context.WithTimeout(authed(context.Background()), 30*time.Second)
						var out []byte
						// The body as it was encoded once: the client's own cost is not the server's.
						err := floodConn.Invoke(ctx, "/ctxc.v1.ContextCompilerService/Compile", flood, &out, grpc.ForceCodec(rawCodec{}))
						cancel()
						if err == nil {
							ok.Add(1)
							continue
						}
						no.Add(1)
						// Again 10 ms later, not the second its RetryInfo says.
						select {
						case <-done:
							return
						case <-time.After(quotaFloodRetry):
						}
					}
				})
			}
			time.Sleep(300 * time.Millisecond) // the flood is at its quota
			return func() { close(done); wg.Wait() }
		}
		steadyCalls(50) // warm up: the tokenizer's tables, the connection
		for range rounds {
			r.alone = append(r.alone, steadyCalls(quotaSteadyCalls)...)
			stop := startFlood(quotaFloodQuota)
			r.beside = append(r.beside, steadyCalls(quotaSteadyCalls)...)
			stop()
			before := ok.Load()
			stop = startFlood(quotaFloodLoops)
			r.under = append(r.under, steadyCalls(quotaSteadyCalls)...)
			stop()
			r.admitted += ok.Load() - before
		}
		r.refused = no.Load()
		return r
	}

	q := run(fmt.Sprintf("quotas:\n  callers:\n    agent: {max_concurrent_calls: %d, max_inflight_bytes: 33554432}\n", quotaFloodQuota), quotaRounds)
	open := run("", 2)
	alone, beside, under := p99(q.alone), p99(q.beside), p99(q.under)
	ms := func(d time.Duration) string { return d.Round(100 * time.Microsecond).String() }
	report("%-24s one caller keeping %d Compiles of %.1f MB going (quota: %d at once, 32 MiB; %d answered, %d refused QUOTA_EXCEEDED), another making Compiles one after another (%d in each condition, in turns): its p99 alone %s, beside one Compile of the flood's at a time %s, under the flood %s (%.1fx beside; bound: 2x; %.1fx alone), %d failed (bound: 0); without quotas, under the same flood: p99 %s (%.0fx alone), %d failed",
		"quota-flood", quotaFloodLoops, float64(len(flood))/1e6, quotaFloodQuota, q.admitted, q.refused, len(q.alone),
		ms(alone), ms(beside), ms(under), float64(under)/float64(beside), float64(under)/float64(alone), q.failed,
		ms(p99(open.under)), float64(p99(open.under))/float64(p99(open.alone)), open.failed)
	if q.failed > 0 {
		t.Errorf("%d of the steady caller's calls failed", q.failed)
	}
	if under > 2*beside {
		t.Errorf("the steady caller's p99 under the flood is %v, more than twice its %v beside the flood's quota's worth", under, beside)
	}
	if q.admitted == 0 || q.refused == 0 {
		t.Errorf("the flood had %d answered and %d refused: it was not at its quota", q.admitted, q.refused)
	}
}

// floodBody is a Compile request of about 4 MB: 200 messages of 20 KB of
// words, encoded.
func floodBody(t *testing.T) []byte {
	st := &ctxcv1.AgentState{SchemaVersion: 1, Model: &ctxcv1.ModelSpec{Name: "gpt-4o"}, Context: &ctxcv1.AgentContext{SystemPrompt: "Be brief."}}
	text := strings.Repeat("the flood says many words again ", 640)
	for i := range 200 {
		role := ctxcv1.Role_ROLE_USER
		if i%2 == 1 {
			role = ctxcv1.Role_ROLE_ASSISTANT
		}
		st.Context.Messages = append(st.Context.Messages, &ctxcv1.Message{Id: fmt.Sprintf("m%d", i), Role: role,
			Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: fmt.Sprintf("%d: %s", i, text)}}}})
	}
	body, err := proto.Marshal(&ctxcv1.CompileRequest{State: st})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// p99 is the 99th percentile of latencies.
func p99(latencies []time.Duration) time.Duration {
	sorted := slices.Sorted(slices.Values(latencies))
	return sorted[len(sorted)*99/100]
}
