package stateref

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/summarycache/redistest"
	"github.com/contextcompiler/ctxc/internal/tenant"
)

// TestStatesAreTheCallersOwn, in memory and on a real Redis shared by two
// stores (two replicas): a caller resolves only the references it was
// given, whole or appended, on either replica; another caller who names
// them (or keeps its own state under the same reference) neither reads nor
// replaces them; and every Redis key carries its caller's namespace.
func TestStatesAreTheCallersOwn(t *testing.T) {
	for _, backend := range []string{"memory", "redis"} {
		t.Run(backend, func(t *testing.T) {
			url := ""
			if backend == "redis" {
				url = redistest.Start(t).URL
			}
			first := newStore(t, DefaultConfig(), url)
			second := first
			if url != "" {
				second = newStore(t, DefaultConfig(), url)
			}
			ctx := context.Background()
			state := func(owner string) *ctxcv1.AgentState {
				return &ctxcv1.AgentState{AgentId: owner, Context: &ctxcv1.AgentContext{Messages: []*ctxcv1.Message{message(0)}}}
			}
			alices := state("alice")
			whole := WholeRef(alices, nil)
			first.PutWhole(ctx, "alice", whole, alices, int64(proto.Size(alices)))
			base, ok, _ := first.Get(ctx, "alice", whole)
			if !ok {
				t.Fatal("alice's own reference did not resolve")
			}
			o := Overlay{Appended: []*ctxcv1.Message{message(1)}}
			appended := AppendedRef(whole, o.Encode())
			first.PutAppended(ctx, "alice", appended, base, whole, o.Encode(), Extend(alices, o))

			owner := func(s *Store, caller, ref string) string {
				r, ok, err := s.Get(ctx, caller, ref)
				switch {
				case err != nil:
					return "error: " + err.Error()
				case !ok:
					return "-"
				}
				return r.State.GetAgentId()
			}
			got := map[string]string{}
			for name, s := range map[string]*Store{"first": first, "second": second} {
				for _, ref := range []string{whole, appended} {
					for _, caller := range []string{"bob", "", tenant.NamespaceOf("alice")} {
						got[fmt.Sprintf("%s %q %s", name, caller, ref[:8])] = owner(s, caller, ref)
					}
				}
			}
			for k, v := range got {
				if v != "-" {
					t.Errorf("%s resolved to %s's state", k, v)
				}
			}

			// Bob keeps his own states under alice's references, on the other
			// replica: alice still gets hers on both.
			bobs := state("bob")
			second.PutWhole(ctx, "bob", whole, bobs, int64(proto.Size(bobs)))
			second.PutAppended(ctx, "bob", appended, Resolved{State: bobs, Size: int64(proto.Size(bobs))}, whole, o.Encode(), Extend(bobs, o))
			if url != "" {
				second.Close() // waits for its writes to Redis
				second = newStore(t, DefaultConfig(), url)
				first = newStore(t, DefaultConfig(), url) // a replica whose memory holds nothing yet
			}
			got = map[string]string{
				"alice whole, first":     owner(first, "alice", whole),
				"alice appended, second": owner(second, "alice", appended),
				"bob appended, first":    owner(first, "bob", appended),
				"bob whole, second":      owner(second, "bob", whole),
			}
			want := map[string]string{"alice whole, first": "alice", "alice appended, second": "alice", "bob appended, first": "bob", "bob whole, second": "bob"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("owners of the states resolved (-want +got):\n%s", diff)
			}
			if url == "" {
				return
			}
			opts, _ := redis.ParseURL(url)
			client := redis.NewClient(opts)
			defer client.Close()
			keys, err := client.Keys(ctx, "*").Result()
			if err != nil {
				t.Fatal(err)
			}
			byCaller := map[string]int{}
			for _, k := range keys {
				switch {
				case strings.HasPrefix(k, DefaultConfig().KeyPrefix+tenant.NamespaceOf("alice")+":"):
					byCaller["alice"]++
				case strings.HasPrefix(k, DefaultConfig().KeyPrefix+tenant.NamespaceOf("bob")+":"):
					byCaller["bob"]++
				default:
					t.Errorf("Redis key %q carries neither caller's namespace", k)
				}
			}
			// Each: two entries and the index of its entries (MaxRedisEntriesPerCaller).
			if diff := cmp.Diff(map[string]int{"alice": 3, "bob": 3}, byCaller); diff != "" {
				t.Errorf("Redis keys by caller (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOneCallerCannotEvictAnothers: 10,000 calls by reference from one
// caller, then 10,000 states sent whole, evict that caller's own states
// and none of another's that holds less; with max_bytes_per_caller, the
// flooding caller never holds more than its share.
func TestOneCallerCannotEvictAnothers(t *testing.T) {
	const size = 1_000
	tests := []struct {
		name      string
		perCaller int64
		wantMost  int64 // the most bob may hold at any time
	}{
		{"fair eviction alone", 0, 40_000},
		{"max_bytes_per_caller", 8_000, 8_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			// Probation holds 10,000 bytes, the protected rest 30,000.
			s := newStore(t, Config{TTL: time.Hour, MaxBytes: 40_000, MaxBytesPerCaller: tt.perCaller, KeyPrefix: "k:"}, "")
			st := &ctxcv1.AgentState{Context: &ctxcv1.AgentContext{Messages: []*ctxcv1.Message{message(0)}}}
			base := Resolved{State: st, Size: size - MessageOverheadBytes - 2}
			byRef := func(caller, ref string) {
				o := Overlay{Appended: []*ctxcv1.Message{message(1)}}
				s.PutAppended(ctx, caller, ref, base, "base", []byte("ab"), Extend(st, o))
			}
			// Alice: three states named by calls (protected), two sent whole
			// and not named since (probation).
			for i := range 3 {
				byRef("alice", fmt.Sprintf("alice-named-%d", i))
			}
			for i := range 2 {
				s.PutWhole(ctx, "alice", fmt.Sprintf("alice-whole-%d", i), st, size)
			}
			bobMost := int64(0)
			held := func() {
				if b := s.probation.callerBytes("bob") + s.protected.callerBytes("bob"); b > bobMost {
					bobMost = b
				}
			}
			for i := range 10_000 {
				byRef("bob", fmt.Sprintf("bob-ref-%d", i))
				held()
			}
			for i := range 10_000 {
				s.PutWhole(ctx, "bob", fmt.Sprintf("bob-whole-%d", i), st, size)
				held()
			}
			if bobMost > tt.wantMost {
				t.Errorf("bob held %d bytes at most, want at most %d", bobMost, tt.wantMost)
			}
			if st := s.Stats(); st.Bytes > 40_000 {
				t.Errorf("the store holds %d bytes, over max_bytes 40,000", st.Bytes)
			}
			var lost []string
			for _, ref := range []string{"alice-named-0", "alice-named-1", "alice-named-2", "alice-whole-0", "alice-whole-1"} {
				if _, ok, _ := s.Get(ctx, "alice", ref); !ok {
					lost = append(lost, ref)
				}
			}
			if len(lost) > 0 {
				t.Errorf("bob's flood evicted alice's %v", lost)
			}
			if _, ok, _ := s.Get(ctx, "bob", "bob-ref-9999"); !ok {
				t.Error("bob's most recent call by reference was evicted")
			}
			if _, ok, _ := s.Get(ctx, "bob", "bob-ref-0"); ok {
				t.Error("bob's oldest call by reference outlived 10,000 more")
			}
		})
	}
}

func TestCapsPerCallerValidated(t *testing.T) {
	c := DefaultConfig()
	c.MaxBytesPerCaller, c.MaxRedisEntriesPerCaller = -1, -2
	if err := c.Validate(); err == nil || err.Error() != "max_bytes_per_caller: -1 is negative\nmax_redis_entries_per_caller: -2 is negative" {
		t.Errorf("Validate() = %v", err)
	}
}

// TestRedisCapPerCaller: on a Redis shared by two stores, a caller past
// max_redis_entries_per_caller loses its own oldest entries, on whichever
// replica wrote them, and none of another caller's.
func TestRedisCapPerCaller(t *testing.T) {
	url := redistest.Start(t).URL
	cfg := DefaultConfig()
	cfg.MaxRedisEntriesPerCaller = 5
	first, second := newStore(t, cfg, url), newStore(t, cfg, url)
	ctx := context.Background()
	state := func(owner string, i int) (*ctxcv1.AgentState, string) {
		st := &ctxcv1.AgentState{AgentId: fmt.Sprintf("%s-%d", owner, i)}
		return st, WholeRef(st, nil)
	}
	var aliceRefs, bobRefs []string
	for i := range 3 {
		st, ref := state("alice", i)
		first.PutWhole(ctx, "alice", ref, st, 100)
		aliceRefs = append(aliceRefs, ref)
	}
	for i := range 20 {
		st, ref := state("bob", i)
		[]*Store{first, second}[i%2].PutWhole(ctx, "bob", ref, st, 100)
		bobRefs = append(bobRefs, ref)
	}
	fresh := newStore(t, cfg, url) // resolves from Redis alone
	resolved := func(caller string, refs []string) []bool {
		var out []bool
		for _, ref := range refs {
			_, ok, err := fresh.Get(ctx, caller, ref)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, ok)
		}
		return out
	}
	if diff := cmp.Diff([]bool{true, true, true}, resolved("alice", aliceRefs)); diff != "" {
		t.Errorf("alice's entries after bob's 20 (-want +got):\n%s", diff)
	}
	want := make([]bool, 20)
	for i := 15; i < 20; i++ {
		want[i] = true
	}
	if diff := cmp.Diff(want, resolved("bob", bobRefs)); diff != "" {
		t.Errorf("bob's entries: want his newest 5 (-want +got):\n%s", diff)
	}
	opts, _ := redis.ParseURL(url)
	client := redis.NewClient(opts)
	defer client.Close()
	keys, err := client.Keys(ctx, cfg.KeyPrefix+tenant.NamespaceOf("bob")+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 5+1 {
		t.Errorf("bob has %d keys in Redis, want his 5 entries and their index", len(keys))
	}
}
