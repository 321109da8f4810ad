//go:build abuse

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// refsFloodCalls is how many calls by reference the flooding caller makes.
const refsFloodCalls = 10_000

// probeRefsFlood: a steady caller holds 5 state refs, each named by a call
// (so protected); another caller makes 10,000 calls by reference, each
// keeping a new state, on a server whose state refs hold 4 MiB (the
// flood's states hold several times that). The flood evicts its own states:
// every one of the steady caller's refs still resolves.
func probeRefsFlood(t *testing.T, report func(string, ...any)) {
	tokens := filepath.Join(t.TempDir(), "tokens")
	const steadyToken = "steady-0123456789abcdef"
	if err := os.WriteFile(tokens, []byte("agent "+abuseToken+"\nsteady "+steadyToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "state_refs:\n  max_bytes: 4194304\n")
	s := startAbuseServer(t, "--auth-token-file", tokens, "--config", cfg, "--metrics-listen", "127.0.0.1:0")
	steady := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+steadyToken)
	c := s.client()
	state := func(who string, i int) *ctxcv1.AgentState {
		return &ctxcv1.AgentState{SchemaVersion: 1, Model: &ctxcv1.ModelSpec{Name: "gpt-4o"},
			Context: &ctxcv1.AgentContext{SystemPrompt: fmt.Sprintf("You answer %s's questions, session %d.", who, i), Messages: turnMessages(0)}}
	}
	var steadyRefs []string
	for i := range 5 {
		resp, err := c.Compile(steady, &ctxcv1.CompileRequest{State: state("steady", i)})
		if err != nil {
			t.Fatal(err)
		}
		named, err := c.Compile(steady, &ctxcv1.CompileRequest{BaseStateRef: resp.GetStateRef(), AppendedMessages: turnMessages(1)})
		if err != nil {
			t.Fatal(err)
		}
		steadyRefs = append(steadyRefs, named.GetStateRef())
	}
	base, err := c.Compile(authed(context.Background()), &ctxcv1.CompileRequest{State: state("agent", 0)})
	if err != nil {
		t.Fatal(err)
	}
	var failed atomic.Int64
	var next atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := next.Add(1); i <= refsFloodCalls; i = next.Add(1) {
				// Each call appends other messages to the same base: a new state kept each time.
				if _, err := c.Compile(authed(context.Background()), &ctxcv1.CompileRequest{BaseStateRef: base.GetStateRef(), AppendedMessages: turnMessages(int(i))}); err != nil {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	flood := time.Since(start)
	evicted := 0
	for _, ref := range steadyRefs {
		if _, err := c.Compile(steady, &ctxcv1.CompileRequest{BaseStateRef: ref, AppendedMessages: turnMessages(2)}); err != nil {
			evicted++
			t.Logf("steady ref %s: %v", ref, err)
		}
	}
	held := stateRefEntries(t, s)
	report("%-24s %d calls by reference from one caller in %.1f s (%d failed), state_refs.max_bytes 4 MiB: %d states held after, so the flood's evicted; %d of the other caller's 5 refs evicted (bound: 0)",
		"refs-flood", refsFloodCalls, flood.Seconds(), failed.Load(), held, evicted)
	if held >= refsFloodCalls {
		t.Errorf("%d states held: the flood did not fill the store, the probe proves nothing", held)
	}
	if failed.Load() > 0 {
		t.Errorf("%d of the flood's calls failed", failed.Load())
	}
	if evicted > 0 {
		t.Errorf("%d of the steady caller's refs evicted by another caller's flood", evicted)
	}
}

// stateRefEntries is the server's ctxc_state_ref_entries, read from its
// /metrics with the flooding caller's token.
func stateRefEntries(t *testing.T, s *server) int {
	return metricInt(t, s, abuseToken, "ctxc_state_ref_entries")
}
