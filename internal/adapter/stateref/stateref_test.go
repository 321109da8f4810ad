package stateref

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/summarycache/redistest"
)

func message(i int) *ctxcv1.Message {
	return &ctxcv1.Message{Id: fmt.Sprintf("m%d", i), Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: fmt.Sprintf("turn %d", i)}}}}
}

func newStore(t *testing.T, cfg Config, url string) *Store {
	t.Helper()
	var r Redis
	if url != "" {
		opts, err := redis.ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		r = Redis{Client: redis.NewClient(opts), Timeout: time.Second}
		t.Cleanup(func() { r.Client.Close() })
	}
	s, err := New(cfg, r, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// A chain of states made on one replica (a whole state, then calls that
// each append a message, past maxChain) resolves on another that shares its
// Redis, to the same states; after a flush it resolves nowhere but in the
// memory of the replica that made it.
func TestReplicasResolveThroughRedis(t *testing.T) {
	url := redistest.Start(t).URL
	a, b := newStore(t, DefaultConfig(), url), newStore(t, DefaultConfig(), url)
	ctx := context.Background()
	st := &ctxcv1.AgentState{SchemaVersion: 1, Model: &ctxcv1.ModelSpec{Name: "gpt-4o"}, Context: &ctxcv1.AgentContext{SystemPrompt: "Be brief.", Messages: []*ctxcv1.Message{message(0)}}}
	ref := WholeRef(st, nil)
	a.PutWhole(ctx, "alice", ref, st, int64(proto.Size(st)))
	a.Close() // waits for the whole state's write
	a = newStore(t, DefaultConfig(), url)
	a.keep("alice", ref, Resolved{State: st, Size: int64(proto.Size(st))}, true)
	base, _, _ := a.Get(ctx, "alice", ref)
	refs, states := []string{ref}, []*ctxcv1.AgentState{st}
	for i := 1; i <= maxChain+3; i++ {
		o := Overlay{Appended: []*ctxcv1.Message{message(i)}}
		if i == 5 {
			o.State = &ctxcv1.AgentState{Model: &ctxcv1.ModelSpec{Name: "gpt-4o-mini"}}
		}
		enc := o.Encode()
		next := AppendedRef(refs[len(refs)-1], enc)
		nst := Extend(base.State, o)
		a.PutAppended(ctx, "alice", next, base, refs[len(refs)-1], enc, nst)
		base, _, _ = a.Get(ctx, "alice", next)
		refs, states = append(refs, next), append(states, nst)
	}
	a.Close()
	for i, r := range refs {
		got, ok, err := b.Get(ctx, "alice", r)
		if !ok || err != nil {
			t.Fatalf("ref %d not resolved by the other replica: %v", i, err)
		}
		if diff := cmp.Diff(states[i], got.State, protocmp.Transform()); diff != "" {
			t.Fatalf("ref %d (-made +resolved):\n%s", i, diff)
		}
	}
	if got, _, _ := b.Get(ctx, "alice", refs[len(refs)-1]); got.State.GetModel().GetName() != "gpt-4o-mini" || len(got.State.GetContext().GetMessages()) != maxChain+4 {
		t.Errorf("last state: model %q, %d messages", got.State.GetModel().GetName(), len(got.State.GetContext().GetMessages()))
	}
	if _, ok, _ := b.Get(ctx, "bob", refs[3]); ok {
		t.Error("bob resolved alice's reference")
	}
	opts, _ := redis.ParseURL(url)
	flush := redis.NewClient(opts)
	defer flush.Close()
	if err := flush.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	c := newStore(t, DefaultConfig(), url)
	if _, ok, err := c.Get(ctx, "alice", refs[10]); ok || err != nil {
		t.Errorf("after a flush a third replica resolved it (%v, %v)", ok, err)
	}
}

// Memory holds at most max_bytes of states, the least recently used going
// first; states never named by a call wait in a quarter of it, so that a
// flood of them cannot push out the states of callers that use
// references; and a state is forgotten once its TTL has passed.
func TestMemoryBounds(t *testing.T) {
	s := newStore(t, Config{TTL: 200 * time.Millisecond, MaxBytes: 4000, KeyPrefix: "k:"}, "")
	ctx := context.Background()
	whole := func(ref string) { s.PutWhole(ctx, "", ref, &ctxcv1.AgentState{AgentId: ref}, 300) }
	whole("used")
	if _, ok, _ := s.Get(ctx, "", "used"); !ok { // named: protected from now on
		t.Fatal("a state just kept did not resolve")
	}
	for i := range 10 {
		whole(fmt.Sprintf("r%d", i))
		if st := s.Stats(); st.Bytes > 4000 {
			t.Fatalf("%d bytes held, max 4000", st.Bytes)
		}
	}
	for i := range 10 {
		_, ok, _ := s.Get(ctx, "", fmt.Sprintf("r%d", i))
		if want := i >= 7; ok != want {
			t.Errorf("r%d resolved %v, want %v (three of 300 bytes fit in probation's 1,000)", i, ok, want)
		}
	}
	if _, ok, _ := s.Get(ctx, "", "used"); !ok {
		t.Error("ten unnamed states pushed out the one a call named")
	}
	s.PutWhole(ctx, "", "huge2", &ctxcv1.AgentState{}, 5000)
	if _, ok, _ := s.Get(ctx, "", "huge2"); ok {
		t.Error("a state over max_bytes was kept")
	}
	time.Sleep(250 * time.Millisecond)
	if _, ok, _ := s.Get(ctx, "", "used"); ok {
		t.Error("a state resolved after its TTL")
	}
}

// What a state costs in memory: its bytes and a decoded message's overhead.
func TestCharge(t *testing.T) {
	st := &ctxcv1.AgentState{Context: &ctxcv1.AgentContext{Messages: []*ctxcv1.Message{message(1), message(2)}}}
	if got := Charge(st, 100); got != 100+2*MessageOverheadBytes {
		t.Errorf("Charge = %d", got)
	}
}

func TestConfigValidate(t *testing.T) {
	c := Config{TTL: 0, MaxBytes: -1}
	err := c.Validate()
	want := "ttl: 0s must be positive\nmax_bytes: -1 is negative\nkey_prefix: required"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

// What a caller keeps beside a state (Remember) comes back with it, is
// counted in the store's bytes, is kept once, only for a state memory
// holds, and goes when the bound needs its room.
func TestRememberKeepsBesideAState(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Config{TTL: time.Hour, MaxBytes: 4000, KeyPrefix: "k:"}, "")
	st := &ctxcv1.AgentState{Context: &ctxcv1.AgentContext{Messages: []*ctxcv1.Message{message(0)}}}
	s.PutWhole(ctx, "alice", "r1", st, 100) // probation: a quarter of 4000
	s.Remember("alice", "r1", "decoded", 50)
	s.Remember("alice", "r1", "again", 60)
	s.Remember("alice", "unknown", "nothing", 10)
	s.Remember("bob", "r1", "not bob's", 10)
	if got := s.Stats().Bytes; got != 150 {
		t.Fatalf("store bytes %d, want the state's 100 and 50 kept beside it", got)
	}
	r, ok, _ := s.Get(ctx, "alice", "r1")
	if !ok || r.Decoded != "decoded" || r.Size != 150 {
		t.Fatalf("got %v, %v (size %d), want what was remembered first, size 150", ok, r.Decoded, r.Size)
	}
	if _, ok, _ := s.Get(ctx, "bob", "r1"); ok {
		t.Fatal("another caller resolved the reference")
	}
	// Named, r1 is protected now. A companion that could never fit beside
	// its state in its segment is not kept; one that fits makes room.
	s.PutWhole(ctx, "alice", "r2", st, 100)
	s.Remember("alice", "r2", "too large", 950) // probation holds 1000
	if r, ok, _ := s.Get(ctx, "alice", "r2"); !ok || r.Decoded != nil {
		t.Fatalf("got %v, %v; want the state held without what could not fit beside it", ok, r.Decoded)
	}
	s.PutWhole(ctx, "alice", "r3", st, 100)
	s.PutWhole(ctx, "alice", "r4", st, 100)
	s.Remember("alice", "r4", "decoded", 850)
	if _, ok, _ := s.Get(ctx, "alice", "r3"); ok {
		t.Fatal("the least recently used state was kept past the bound")
	}
	if r, ok, _ := s.Get(ctx, "alice", "r4"); !ok || r.Decoded != "decoded" {
		t.Fatalf("got %v, %v; want r4 with what was remembered", ok, r.Decoded)
	}
	if got := s.Stats().Bytes; got > 4000 {
		t.Fatalf("store bytes %d, over its bound", got)
	}
}
