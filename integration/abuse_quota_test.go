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

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// Quota probe: one caller floods, another calls steadily.
const (
	quotaFloodLoops  = 8                     // the flooding caller's calls kept going at once
	quotaSteadyCalls = 500                   // the steady caller's Compiles in a row, one after another
	quotaRounds      = 5                     // rounds of quotaSteadyCalls in each condition, in turns
	quotaFloodQuota  = 1                     // the flooding caller's max_concurrent_calls
	quotaFloodRate   = 2                     // the flooding caller's calls_per_second (burst 1)
	quotaFloodRetry  = 10 * time.Millisecond // how soon the hostile flood sends a refused call again
)

// quotaRun is what the steady caller saw on one server: its latencies
// alone, beside the flood keeping to the retry delays it is told (its
// quota's worth of work), and under the flood retrying a hundred times
// sooner than told.
type quotaRun struct {
	alone, beside, under []time.Duration
	failed               int
	admitted, refused    int64 // the flood's calls
}

// probeQuotaFlood: caller "agent" keeps 8 Compiles of 4 MB going at once,
// each sent again as soon as it is answered, on a server where its quota
// is 1 call at a time, 2 calls a second and 32 MiB in flight; caller
// "steady" (no quota) makes Compiles of a chat one after another: 500
// alone (about a second), 500 while the flood waits the retry delay each refusal names (a
// caller at its quota: issue 43 holds the steady caller's p99 there to 2x
// its p99 alone), 500 while it sends a refused call again 10 ms later
// (hostile: told a second, it waits a hundredth), five times over. None of
// the steady caller's calls fails in either. Under the hostile flood,
// hundreds of refused calls a second still reach the server and are turned
// away on the same 2 cores (about 3x its p99 alone, measured): what the quota must
// show there is that it spares the others most of what the same flood
// costs them on a server without quotas, measured alike: its p99 is held
// to half of theirs.
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
		startFlood := func(loops int, hostile bool) (stop func()) {
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
						wait := retryDelay(err)
						if hostile {
							wait = quotaFloodRetry // not the delay its RetryInfo says
						}
						select {
						case <-done:
							return
						case <-time.After(wait):
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
			before := ok.Load()
			stop := startFlood(quotaFloodLoops, false)
			r.beside = append(r.beside, steadyCalls(quotaSteadyCalls)...)
			stop()
			stop = startFlood(quotaFloodLoops, true)
			r.under = append(r.under, steadyCalls(quotaSteadyCalls)...)
			stop()
			r.admitted += ok.Load() - before
		}
		r.refused = no.Load()
		return r
	}

	q := run(fmt.Sprintf("quotas:\n  callers:\n    agent: {max_concurrent_calls: %d, calls_per_second: %d, burst: 1, max_inflight_bytes: 33554432}\n", quotaFloodQuota, quotaFloodRate), quotaRounds)
	open := run("", 2)
	alone, beside, under := p99(q.alone), p99(q.beside), p99(q.under)
	ms := func(d time.Duration) string { return d.Round(100 * time.Microsecond).String() }
	report("%-24s one caller keeping %d Compiles of %.1f MB going (quota: %d at once, %d a second, 32 MiB; %d answered, %d refused QUOTA_EXCEEDED), another making Compiles one after another (%d in each condition, in turns): its p99 alone %s; while the flood waits the retry delays it is told %s (%.1fx alone; bound: 2x); while it retries after 10 ms %s (%.1fx alone; bound: half the %s it is without quotas, %.0fx alone); %d failed (bound: 0, and %d without quotas)",
		"quota-flood", quotaFloodLoops, float64(len(flood))/1e6, quotaFloodQuota, quotaFloodRate, q.admitted, q.refused, len(q.alone),
		ms(alone), ms(beside), float64(beside)/float64(alone), ms(under), float64(under)/float64(alone),
		ms(p99(open.under)), float64(p99(open.under))/float64(p99(open.alone)), q.failed, open.failed)
	if q.failed > 0 {
		t.Errorf("%d of the steady caller's calls failed", q.failed)
	}
	if beside > 2*alone {
		t.Errorf("the steady caller's p99 beside a caller at its quota is %v, more than twice its %v alone", beside, alone)
	}
	if openUnder := p99(open.under); 2*under > openUnder {
		t.Errorf("the steady caller's p99 under a flood retrying after 10 ms is %v, more than half the %v of the same flood without quotas", under, openUnder)
	}
	if q.admitted == 0 || q.refused == 0 {
		t.Errorf("the flood had %d answered and %d refused: it was not at its quota", q.admitted, q.refused)
	}
}

// retryDelay is the delay a refusal's google.rpc.RetryInfo names, or a
// second.
func retryDelay(err error) time.Duration {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.RetryInfo); ok {
			return info.GetRetryDelay().AsDuration()
		}
	}
	return time.Second
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
