package summarycache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"github.com/contextcompiler/ctxc/internal/bounds"
	"github.com/contextcompiler/ctxc/internal/tenant"
)

// Config is the config file's `summary_cache` section.
type Config struct {
	// RedisURL ("redis://host:6379/0") selects Redis; empty keeps the cache in memory.
	RedisURL string `yaml:"redis_url" json:"redis_url"`
	// TTL is how long an entry lives. Default 24h.
	TTL time.Duration `yaml:"ttl" json:"ttl"`
	// MaxEntries bounds the in-memory cache, which also stands in front of
	// Redis so that a Redis outage does not turn every lookup into a model
	// call. When it is full, the caller holding the most entries gives up
	// its least recently used, so that one caller's flood does not push out
	// another's. Default 10000.
	MaxEntries int `yaml:"max_entries" json:"max_entries"`
	// KeyPrefix starts every Redis key. Default "ctxc:summary:".
	KeyPrefix string `yaml:"key_prefix" json:"key_prefix"`
	// RedisTimeout bounds each Redis operation, so an outage costs at most
	// this per lookup. Default 200ms.
	RedisTimeout time.Duration `yaml:"redis_timeout" json:"redis_timeout"`
}

// DefaultConfig returns the in-memory defaults.
func DefaultConfig() Config {
	return Config{TTL: 24 * time.Hour, MaxEntries: 10000, KeyPrefix: "ctxc:summary:", RedisTimeout: 200 * time.Millisecond}
}

// Validate reports every problem of the config.
func (c *Config) Validate() error {
	var errs []error
	if c.RedisURL != "" {
		if _, err := redis.ParseURL(c.RedisURL); err != nil {
			errs = append(errs, fmt.Errorf("redis_url: %v", err))
		}
	}
	return errors.Join(append(errs,
		bounds.Positive("ttl", c.TTL),
		bounds.AtLeast("max_entries", c.MaxEntries, 1),
		bounds.Positive("redis_timeout", c.RedisTimeout),
	)...)
}

// Stats count a cache's lookups since start.
type Stats struct {
	Hits, Misses, Errors int64
}

// Result says how one lookup went.
type Result struct {
	// Hit is true when the value came from the cache or from a concurrent
	// identical request's computation: this request made no call of its own.
	Hit bool
	// Errors counts backend failures during the lookup (each also a miss).
	Errors int
}

// Cache is safe for concurrent use.
type Cache struct {
	cfg    Config
	memory *memory
	redis  *redis.Client
	group  singleflight.Group

	hits, misses, errs atomic.Int64
}

// New builds a cache from a validated config. It does not contact Redis: an
// unreachable Redis at start is the same counted miss as later. With Redis,
// log receives the Redis client's own messages; the client library offers
// only a process-wide logger, so the last cache built sets it.
func New(cfg Config, log *slog.Logger) (*Cache, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Cache{cfg: cfg, memory: &memory{max: cfg.MaxEntries, ttl: cfg.TTL, callers: map[string]*expirable.LRU[string, string]{}}}
	if cfg.RedisURL == "" {
		return c, nil
	}
	if log == nil {
		log = slog.Default()
	}
	redis.SetLogger(redisLogger{log})
	opts, _ := redis.ParseURL(cfg.RedisURL)
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = cfg.RedisTimeout, cfg.RedisTimeout, cfg.RedisTimeout
	opts.PoolTimeout = cfg.RedisTimeout
	// One attempt per lookup: a retry would double an outage's cost for a value
	// that can be recomputed.
	opts.MaxRetries = -1
	c.redis = redis.NewClient(opts)
	return c, nil
}

// Close releases the Redis connections.
func (c *Cache) Close() error {
	if c.redis != nil {
		return c.redis.Close()
	}
	return nil
}

// Backend names where entries live: "memory" or "redis".
func (c *Cache) Backend() string {
	if c.redis != nil {
		return "redis"
	}
	return "memory"
}

// RedisClient is the cache's Redis connection, for other stores that share
// it; nil when the cache is in memory.
func (c *Cache) RedisClient() *redis.Client {
	if c == nil {
		return nil
	}
	return c.redis
}

// Stats returns the cache's counters.
func (c *Cache) Stats() Stats {
	return Stats{Hits: c.hits.Load(), Misses: c.misses.Load(), Errors: c.errs.Load()}
}

// Key builds a cache key from what identifies a value: the content (or
// artifact id) and the focus. Parts are length-prefixed so that ("ab", "c")
// and ("a", "bc") differ.
func Key(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// GetOrCompute returns the value the call's caller cached under key, or
// computes, stores and returns it. Concurrent calls of one caller with one
// key share one computation. A failed computation is returned and not
// stored. A nil *Cache computes every time.
func (c *Cache) GetOrCompute(ctx context.Context, key string, compute func(context.Context) (string, error)) (string, Result, error) {
	if c == nil {
		v, err := compute(ctx)
		return v, Result{}, err
	}
	key = scoped(ctx, key)
	var res Result
	v, ok, err := c.get(ctx, key)
	if err != nil {
		res.Errors++
	}
	if ok {
		c.hits.Add(1)
		res.Hit = true
		return v, res, nil
	}
	leader := false
	got, err, _ := c.group.Do(key, func() (any, error) {
		leader = true
		v, err := compute(ctx)
		if err != nil {
			return "", err
		}
		if err := c.set(ctx, key, v); err != nil {
			res.Errors++
		}
		return v, nil
	})
	if leader {
		c.misses.Add(1)
	} else {
		c.hits.Add(1)
		res.Hit = true
	}
	if err != nil {
		return "", res, err
	}
	return got.(string), res, nil
}

// Lookup returns the value the call's caller stored under key, counting a
// hit or a miss. A backend failure is returned (and counted as an error and
// a miss).
func (c *Cache) Lookup(ctx context.Context, key string) (string, bool, error) {
	v, ok, err := c.get(ctx, scoped(ctx, key))
	if ok {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	return v, ok, err
}

// Store stores value under key for the call's caller, for the configured
// TTL, replacing what that caller stored there.
func (c *Cache) Store(ctx context.Context, key, value string) error {
	return c.set(ctx, scoped(ctx, key), value)
}

// scoped is where key lives for the call's caller, in memory and (after
// KeyPrefix) in Redis: every entry is the caller's own, so that a caller
// who sends another's attachment id, or the content another summarized,
// reads and replaces only its own entries. Every method that takes a key
// goes through here; get and set take scoped keys only.
func scoped(ctx context.Context, key string) string {
	return tenant.Namespace(ctx) + ":" + key
}

// get looks in memory, then in Redis, under a scoped key; a value found in
// Redis is kept in memory too.
func (c *Cache) get(ctx context.Context, key string) (string, bool, error) {
	if v, ok := c.memory.Get(key); ok || c.redis == nil {
		return v, ok, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RedisTimeout)
	defer cancel()
	v, err := c.redis.Get(ctx, c.cfg.KeyPrefix+key).Result()
	switch {
	case err == nil:
		c.memory.Add(key, v)
		return v, true, nil
	case errors.Is(err, redis.Nil):
		return "", false, nil
	default:
		c.errs.Add(1)
		return "", false, err
	}
}

// set stores under a scoped key in memory, and in Redis when there is one.
func (c *Cache) set(ctx context.Context, key, value string) error {
	c.memory.Add(key, value)
	if c.redis == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RedisTimeout)
	defer cancel()
	if err := c.redis.Set(ctx, c.cfg.KeyPrefix+key, value, c.cfg.TTL).Err(); err != nil {
		c.errs.Add(1)
		return err
	}
	return nil
}

// redisLogger sends the Redis client's messages (reconnects, pool trouble)
// to the service's structured log instead of the library's own stderr lines.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, "redis: "+fmt.Sprintf(format, v...), "component", "summary_cache")
}

// memory is the in-memory cache: each caller's entries in an LRU of their
// own, all of them bounded together by max entries.
type memory struct {
	max int
	ttl time.Duration

	mu      sync.Mutex
	callers map[string]*expirable.LRU[string, string] // by namespace
}

// namespaceOf is the namespace a scoped key starts with.
func namespaceOf(key string) string { return key[:min(len(key), tenant.NamespaceLen)] }

func (m *memory) Get(key string) (string, bool) {
	m.mu.Lock()
	l := m.callers[namespaceOf(key)]
	m.mu.Unlock()
	if l == nil {
		return "", false
	}
	return l.Get(key)
}

// Add keeps value under key; past max entries, the caller holding the most
// loses its least recently used.
func (m *memory) Add(key, value string) {
	ns := namespaceOf(key)
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.callers[ns]
	if l == nil {
		l = expirable.NewLRU[string, string](m.max, nil, m.ttl)
		m.callers[ns] = l
	}
	l.Add(key, value)
	for {
		total, most := 0, ""
		for c, l := range m.callers {
			total += l.Len()
			if most == "" || l.Len() > m.callers[most].Len() || (l.Len() == m.callers[most].Len() && c < most) {
				most = c
			}
		}
		if total <= m.max {
			return
		}
		if _, _, ok := m.callers[most].RemoveOldest(); !ok {
			return
		}
	}
}
