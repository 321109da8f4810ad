package summarycache_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/summarycache"
	"github.com/contextcompiler/ctxc/internal/summarycache/redistest"
)

func newCache(t *testing.T, redisURL string) *summarycache.Cache {
	t.Helper()
	cfg := summarycache.DefaultConfig()
	cfg.RedisURL = redisURL
	c, err := summarycache.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// lookup runs GetOrCompute with a computation that counts its calls.
func lookup(t *testing.T, c *summarycache.Cache, key string, calls *atomic.Int32) (string, summarycache.Result) {
	t.Helper()
	v, res, err := c.GetOrCompute(context.Background(), key, func(context.Context) (string, error) {
		calls.Add(1)
		return "summary of " + key, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return v, res
}

func TestKey(t *testing.T) {
	if summarycache.Key("ab", "c") == summarycache.Key("a", "bc") {
		t.Error("length-prefixed parts must differ")
	}
	if summarycache.Key("artifact", "focus 1") == summarycache.Key("artifact", "focus 2") {
		t.Error("a different focus must give a different key")
	}
	if summarycache.Key("x", "y") != summarycache.Key("x", "y") {
		t.Error("keys must be stable")
	}
}

// backends gives each backend's redis_url by name: the memory cache, and a
// real redis-server started for the test.
func backends() map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"memory": func(*testing.T) string { return "" },
		"redis":  func(t *testing.T) string { return redistest.Start(t).URL },
	}
}

func TestHitsAndMisses(t *testing.T) {
	for name, url := range backends() {
		t.Run(name, func(t *testing.T) {
			c := newCache(t, url(t))
			var calls atomic.Int32
			var results []summarycache.Result
			for _, key := range []string{"a", "a", "b", "a"} {
				v, res := lookup(t, c, key, &calls)
				if v != "summary of "+key {
					t.Errorf("value %q for %q", v, key)
				}
				results = append(results, res)
			}
			want := []summarycache.Result{{}, {Hit: true}, {}, {Hit: true}}
			if diff := cmp.Diff(want, results); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(summarycache.Stats{Hits: 2, Misses: 2}, c.Stats()); diff != "" || calls.Load() != 2 {
				t.Errorf("stats (-want +got):\n%s computations %d", diff, calls.Load())
			}
			if c.Backend() != name {
				t.Errorf("backend %q", c.Backend())
			}
		})
	}
}

// TestLookupAndStore: what Store puts is what Lookup finds, replaced by a
// later Store; lookups count as hits and misses.
func TestLookupAndStore(t *testing.T) {
	for name, url := range backends() {
		t.Run(name, func(t *testing.T) {
			c := newCache(t, url(t))
			ctx := context.Background()
			type found struct {
				Value string
				OK    bool
			}
			var got []found
			look := func() {
				v, ok, err := c.Lookup(ctx, "doc")
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, found{v, ok})
			}
			look()
			for _, v := range []string{"first", "second"} {
				if err := c.Store(ctx, "doc", v); err != nil {
					t.Fatal(err)
				}
				look()
			}
			if diff := cmp.Diff([]found{{}, {"first", true}, {"second", true}}, got); diff != "" {
				t.Errorf("lookups (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(summarycache.Stats{Hits: 2, Misses: 1}, c.Stats()); diff != "" {
				t.Errorf("stats (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFailedComputationIsNotStored(t *testing.T) {
	c := newCache(t, "")
	boom := errors.New("boom")
	_, _, err := c.GetOrCompute(context.Background(), "k", func(context.Context) (string, error) { return "", boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	var calls atomic.Int32
	if _, res := lookup(t, c, "k", &calls); res.Hit || calls.Load() != 1 {
		t.Errorf("after a failure: hit %v, computations %d; want a fresh computation", res.Hit, calls.Load())
	}
}

func TestConcurrentIdenticalRequestsShareOneComputation(t *testing.T) {
	c := newCache(t, "")
	release := make(chan struct{})
	var calls atomic.Int32
	var wg sync.WaitGroup
	const n = 8
	values := make([]string, n)
	started := make(chan struct{}, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started <- struct{}{}
			values[i], _, _ = c.GetOrCompute(context.Background(), "same", func(context.Context) (string, error) {
				calls.Add(1)
				<-release
				return "shared", nil
			})
		}()
	}
	for i := 0; i < n; i++ {
		<-started
	}
	// Let the goroutines reach the shared call before it finishes; a late one
	// finds the stored value instead, which is also one computation.
	time.Sleep(20 * time.Millisecond)
	close(release)
	wg.Wait()
	if calls.Load() != 1 {
		t.Errorf("%d computations, want 1", calls.Load())
	}
	for _, v := range values {
		if v != "shared" {
			t.Fatalf("values %q", values)
		}
	}
	if st := c.Stats(); st.Misses != 1 || st.Hits != n-1 {
		t.Errorf("stats %+v, want 1 miss and %d hits", st, n-1)
	}
}

// TestRedisOutageServesWhatMemoryHolds: the in-process cache stands in front
// of Redis, so a Redis outage does not turn lookups of known values into
// model calls; what is new is computed once and then served from memory.
// While Redis is up, replicas share what each computed.
func TestRedisOutageServesWhatMemoryHolds(t *testing.T) {
	srv := redistest.Start(t)
	c, replica := newCache(t, srv.URL), newCache(t, srv.URL)
	var calls atomic.Int32
	lookup(t, c, "a", &calls)
	if _, res := lookup(t, replica, "a", &calls); !res.Hit || res.Errors != 0 {
		t.Fatalf("a replica's lookup: %+v, want a hit from Redis", res)
	}
	srv.Kill()
	if v, res := lookup(t, c, "a", &calls); v != "summary of a" || !res.Hit || res.Errors != 0 {
		t.Errorf("a known value with Redis down: %q %+v, want a hit from memory", v, res)
	}
	if v, res := lookup(t, c, "b", &calls); v != "summary of b" || res.Hit || res.Errors != 2 {
		t.Errorf("a new value with Redis down: %q %+v, want it computed, with 2 errors (get, set)", v, res)
	}
	for range 5 {
		if _, res := lookup(t, c, "b", &calls); !res.Hit || res.Errors != 0 {
			t.Errorf("the new value again: %+v, want a hit from memory", res)
		}
	}
	if calls.Load() != 2 {
		t.Errorf("%d computations, want 2 (a and b, once each)", calls.Load())
	}
}

func TestUnreachableRedisAtStart(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("redis://%s/0", l.Addr())
	l.Close()
	c := newCache(t, url)
	var calls atomic.Int32
	if v, res := lookup(t, c, "k", &calls); v != "summary of k" || res.Errors != 2 {
		t.Errorf("value %q result %+v", v, res)
	}
}

func TestConfigValidate(t *testing.T) {
	c := summarycache.Config{RedisURL: "mysql://x"}
	err := c.Validate()
	if err == nil {
		t.Fatal("want errors")
	}
	want := "redis_url: redis: invalid URL scheme: mysql\nttl: 0s must be positive\nmax_entries: 0 is less than 1\nredis_timeout: 0s must be positive"
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}
