package summarycache_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/contextcompiler/ctxc/internal/summarycache"
	"github.com/contextcompiler/ctxc/internal/summarycache/redistest"
	"github.com/contextcompiler/ctxc/internal/tenant"
)

// replicas are two caches sharing one backend: one cache twice in memory,
// or two caches (two service instances) on one real Redis.
func replicas(t *testing.T, backend string) (a, b *summarycache.Cache, url string) {
	if backend == "memory" {
		c := newCache(t, "")
		return c, c, ""
	}
	url = redistest.Start(t).URL
	return newCache(t, url), newCache(t, url), url
}

// TestEveryEntryIsTheCallersOwn: whatever key a caller names (the key
// another caller stored under, that caller's namespace spelled into the
// key, a key made from the same content), it reads and replaces only its
// own entries, on the replica that stored them and on another sharing its
// Redis; GetOrCompute computes afresh for each caller; and every key
// written to Redis carries the namespace of the caller that wrote it.
func TestEveryEntryIsTheCallersOwn(t *testing.T) {
	for _, backend := range []string{"memory", "redis"} {
		t.Run(backend, func(t *testing.T) {
			first, second, url := replicas(t, backend)
			alice := tenant.WithCaller(context.Background(), "alice")
			bob := tenant.WithCaller(context.Background(), "bob")
			shared := context.Background() // no authentication
			key := "attachment/v1/runbook"

			if err := first.Store(alice, key, "alice's runbook"); err != nil {
				t.Fatal(err)
			}
			type read struct {
				Value string
				Found bool
			}
			lookup := func(c *summarycache.Cache, ctx context.Context, key string) read {
				t.Helper()
				v, ok, err := c.Lookup(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				return read{v, ok}
			}
			got := map[string]read{
				"bob, same key, same replica":       lookup(first, bob, key),
				"bob, same key, other replica":      lookup(second, bob, key),
				"bob, alice's namespace in key":     lookup(second, bob, tenant.NamespaceOf("alice")+":"+key),
				"no caller, same key":               lookup(second, shared, key),
				"alice, other replica":              lookup(second, alice, key),
				"alice, bob's namespace in the key": lookup(second, alice, tenant.NamespaceOf("bob")+":"+key),
			}
			want := map[string]read{
				"bob, same key, same replica":       {},
				"bob, same key, other replica":      {},
				"bob, alice's namespace in key":     {},
				"no caller, same key":               {},
				"alice, other replica":              {"alice's runbook", true},
				"alice, bob's namespace in the key": {},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("reads before bob writes (-want +got):\n%s", diff)
			}

			// Bob stores under the same key, on either replica: alice still
			// reads hers, bob his.
			if err := second.Store(bob, key, "bob's injection"); err != nil {
				t.Fatal(err)
			}
			if err := first.Store(bob, tenant.NamespaceOf("alice")+":"+key, "bob's guess"); err != nil {
				t.Fatal(err)
			}
			got = map[string]read{"alice, first": lookup(first, alice, key), "alice, second": lookup(second, alice, key), "bob, first": lookup(first, bob, key)}
			want = map[string]read{"alice, first": {"alice's runbook", true}, "alice, second": {"alice's runbook", true}, "bob, first": {"bob's injection", true}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("reads after bob writes (-want +got):\n%s", diff)
			}

			// A summary alice paid for is not bob's: bob's computation runs,
			// and bob's result does not replace alice's.
			sumKey := summarycache.Key("llm_summarize/v1", "model", "the same content", "focus")
			compute := func(c *summarycache.Cache, ctx context.Context, text string) (string, bool) {
				t.Helper()
				v, res, err := c.GetOrCompute(ctx, sumKey, func(context.Context) (string, error) { return text, nil })
				if err != nil {
					t.Fatal(err)
				}
				return v, res.Hit
			}
			type summary struct {
				Value string
				Hit   bool
			}
			var gotSums []summary
			for _, step := range []struct {
				c    *summarycache.Cache
				ctx  context.Context
				text string
			}{{first, alice, "alice's summary"}, {second, bob, "bob's summary"}, {second, alice, "recomputed"}, {first, bob, "recomputed"}} {
				v, hit := compute(step.c, step.ctx, step.text)
				gotSums = append(gotSums, summary{v, hit})
			}
			wantSums := []summary{{"alice's summary", false}, {"bob's summary", false}, {"alice's summary", true}, {"bob's summary", true}}
			if diff := cmp.Diff(wantSums, gotSums); diff != "" {
				t.Errorf("summaries (-want +got):\n%s", diff)
			}

			if url == "" {
				return
			}
			opts, _ := redis.ParseURL(url)
			client := redis.NewClient(opts)
			defer client.Close()
			keys, err := client.Keys(context.Background(), "*").Result()
			if err != nil {
				t.Fatal(err)
			}
			prefix := summarycache.DefaultConfig().KeyPrefix
			owners := map[string]int{}
			for _, k := range keys {
				switch {
				case strings.HasPrefix(k, prefix+tenant.NamespaceOf("alice")+":"):
					owners["alice"]++
				case strings.HasPrefix(k, prefix+tenant.NamespaceOf("bob")+":"):
					owners["bob"]++
				default:
					t.Errorf("Redis key %q carries neither caller's namespace", k)
				}
			}
			if diff := cmp.Diff(map[string]int{"alice": 2, "bob": 3}, owners); diff != "" {
				t.Errorf("Redis keys by caller (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOneCallerCannotPushOutAnothers: in memory, past max_entries the caller
// holding the most loses its least recently used entries: one caller's
// flood of 1,000 entries leaves another's 3, and the cache holds at most
// max_entries.
func TestOneCallerCannotPushOutAnothers(t *testing.T) {
	cfg := summarycache.DefaultConfig()
	cfg.MaxEntries = 10
	c, err := summarycache.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	alice := tenant.WithCaller(context.Background(), "alice")
	bob := tenant.WithCaller(context.Background(), "bob")
	for i := range 3 {
		if err := c.Store(alice, fmt.Sprint("doc", i), "alice's"); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 1_000 {
		if err := c.Store(bob, fmt.Sprint("doc", i), "bob's"); err != nil {
			t.Fatal(err)
		}
	}
	held := func(ctx context.Context, n int) []bool {
		var out []bool
		for i := range n {
			_, ok, _ := c.Lookup(ctx, fmt.Sprint("doc", i))
			out = append(out, ok)
		}
		return out
	}
	if diff := cmp.Diff([]bool{true, true, true}, held(alice, 3)); diff != "" {
		t.Errorf("alice's entries after bob's flood (-want +got):\n%s", diff)
	}
	bobs := held(bob, 1_000)
	kept := 0
	for i, ok := range bobs {
		if ok {
			kept++
			if i < 1_000-7 {
				t.Errorf("bob's doc%d kept, an older one than his newest 7", i)
			}
		}
	}
	if kept != 7 {
		t.Errorf("bob keeps %d entries, want the 7 left of max_entries 10", kept)
	}
}
