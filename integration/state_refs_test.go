//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/contextcompiler/ctxc/client"
	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/summarycache/redistest"
)

// rotating sends each Compile to the next replica, as a load balancer that
// knows nothing of references would.
type rotating struct {
	ctxcv1.ContextCompilerServiceClient
	replicas []ctxcv1.ContextCompilerServiceClient
	next     int
	sentTo   []int
}

func (r *rotating) Compile(ctx context.Context, req *ctxcv1.CompileRequest, opts ...grpc.CallOption) (*ctxcv1.CompileResponse, error) {
	i := r.next % len(r.replicas)
	r.next++
	r.sentTo = append(r.sentTo, i)
	return r.replicas[i].Compile(ctx, req, opts...)
}

// turnMessages are the messages of turn i of a support session: a question
// and an answer naming what it found.
func turnMessages(i int) []*ctxcv1.Message {
	text := func(s string) []*ctxcv1.Part { return []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: s}}} }
	return []*ctxcv1.Message{
		{Id: fmt.Sprintf("u%d", i), Role: ctxcv1.Role_ROLE_USER, Parts: text(fmt.Sprintf("Why does job %d of the nightly export fail?", i))},
		{Id: fmt.Sprintf("a%d", i), Role: ctxcv1.Role_ROLE_ASSISTANT, Parts: text(fmt.Sprintf("Job %d fails because export.go:%d opens the bucket before the token refresh; moving the refresh first fixes it.", i, 100+i))},
	}
}

// TestStateRefsAcrossReplicas: three replicas share a real Redis. A
// reference one replica gave resolves on another; a runtime whose calls go
// to a different replica each turn sends its growing state by reference and
// gets what the whole state gets; after Redis is flushed the client sends
// the whole state again by itself, and the caller sees no error.
func TestStateRefsAcrossReplicas(t *testing.T) {
	t.Parallel()
	redisServer := redistest.Start(t)
	cfg := filepath.Join(t.TempDir(), "ctxc.yaml")
	if err := os.WriteFile(cfg, []byte("summary_cache:\n  redis_url: "+redisServer.URL+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rs := startReplicas(t, 3, "--config", cfg)
	var replicas []ctxcv1.ContextCompilerServiceClient
	for _, r := range rs.replicas {
		replicas = append(replicas, r.client())
	}
	ctx := context.Background()
	st := &ctxcv1.AgentState{SchemaVersion: 1, Model: &ctxcv1.ModelSpec{Name: "gpt-4o"}, Context: &ctxcv1.AgentContext{SystemPrompt: "You answer on-call questions."}}
	st.Context.Messages = turnMessages(0)

	// A reference made on replica 0 resolves on replica 1: a small whole
	// state reaches Redis before the call answers.
	first, err := replicas[0].Compile(ctx, &ctxcv1.CompileRequest{State: st})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := replicas[1].Compile(ctx, &ctxcv1.CompileRequest{BaseStateRef: first.GetStateRef(), AppendedMessages: turnMessages(1)}); err != nil {
		t.Fatalf("replica 1 did not resolve replica 0's reference: %v", err)
	}

	lb := &rotating{replicas: replicas}
	refs := client.NewStateRefs(lb)
	const turns = 30
	for i := 1; i <= turns; i++ {
		st.Context.Messages = append(st.Context.Messages, turnMessages(i)...)
		got, err := refs.Compile(ctx, &ctxcv1.CompileRequest{State: st})
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		want, err := replicas[0].Compile(ctx, &ctxcv1.CompileRequest{State: st})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, protocmp.Transform(), protocmp.IgnoreFields(&ctxcv1.StageReport{}, "duration_micros"),
			protocmp.IgnoreFields(&ctxcv1.CompileResponse{}, "state_ref")); diff != "" {
			t.Fatalf("turn %d: by reference differs from whole (-whole +by reference):\n%s", i, diff)
		}
	}
	byRef, misses := refs.Counts()
	// The first call goes whole; every other resolves on a replica that did
	// not make its reference.
	if byRef != turns-1 || misses != 0 {
		t.Errorf("%d by reference, %d misses; want %d and 0", byRef, misses, turns-1)
	}

	opts, _ := redis.ParseURL(redisServer.URL)
	flush := redis.NewClient(opts)
	defer flush.Close()
	if err := flush.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	st.Context.Messages = append(st.Context.Messages, turnMessages(turns+1)...)
	got, err := refs.Compile(ctx, &ctxcv1.CompileRequest{State: st})
	if err != nil {
		t.Fatalf("after the flush the caller saw %v", err)
	}
	if _, after := refs.Counts(); after != misses+1 {
		t.Errorf("misses %d after the flush, want %d: the reference should have missed on the next replica", after, misses+1)
	}
	if n := len(got.GetMessages()); n != len(st.Context.Messages)+1 {
		t.Errorf("%d messages compiled, want the system prompt and %d", n, len(st.Context.Messages))
	}
	// The replicas count what they resolved and what they missed.
	var hits, missed float64
	for _, r := range rs.replicas {
		m := scrapeMetrics(t, r.metricsURL(t))
		hits += m.sum("ctxc_state_ref_lookups_total", map[string]string{"result": "hit"})
		missed += m.sum("ctxc_state_ref_lookups_total", map[string]string{"result": "miss"})
	}
	// (Hits: the first reference resolved on replica 1, and every call by
	// reference the tracker made that did not miss.)
	if want := float64(1 + byRef - misses); hits < want || missed < float64(misses+1) {
		t.Errorf("ctxc_state_ref_lookups_total: %v hits, %v misses; want at least %v and %d", hits, missed, want, misses+1)
	}
}
