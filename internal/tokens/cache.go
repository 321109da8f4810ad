package tokens

import (
	"sync"
	"sync/atomic"
)

// cacheShards spreads lock traffic: every request looks up every message.
const cacheShards = 64

// cacheKey is a 64-bit hash of an encoding's id and a content: a plain
// integer, so map lookups take the runtime's fast path for 8-byte keys.
type cacheKey uint64

// countCache maps (encoding, content hash) to a raw token count. Each shard
// keeps two generations: lookups read the current one, then the previous one
// (promoting the hit); when the current generation fills up it becomes the
// previous one and the oldest generation is dropped. That approximates LRU
// with no per-entry list nodes, and bounds the cache at the configured number
// of entries. Hashes are 64-bit; a collision (about 2^-64 per pair) would
// reuse another text's count.
type countCache struct {
	shards [cacheShards]cacheShard
	half   int // entries per shard generation
}

type cacheShard struct {
	mu       sync.RWMutex
	cur, old map[cacheKey]int32
	// hits and misses count lookups (CacheStats); they share the cache line
	// the lock word already makes every lookup write.
	hits, misses atomic.Uint64
	_            [8]byte // 64 bytes a shard: one cache line each
}

// newCountCache returns a cache of at most entries counts, or nil (no caching)
// when entries is 0.
func newCountCache(entries int) *countCache {
	if entries <= 0 {
		return nil
	}
	half := entries / cacheShards / 2
	if half < 1 {
		half = 1
	}
	c := &countCache{half: half}
	for i := range c.shards {
		c.shards[i].cur = make(map[cacheKey]int32)
	}
	return c
}

func (c *countCache) shard(k cacheKey) *cacheShard {
	return &c.shards[(k>>58)%cacheShards]
}

// get looks a count up; a hit is counted here, a miss only when add stores
// what was tokenized instead (a caller may look up twice before it tokenizes).
func (c *countCache) get(k cacheKey) (int, bool) {
	s := c.shard(k)
	s.mu.RLock()
	v, ok := s.cur[k]
	if ok {
		s.mu.RUnlock()
		s.hits.Add(1)
		return int(v), true
	}
	v, ok = s.old[k]
	s.mu.RUnlock()
	if ok {
		s.hits.Add(1)
		c.put(k, int(v))
	}
	return int(v), ok
}

// add stores a count that a lookup missed and the counter then tokenized.
func (c *countCache) add(k cacheKey, v int) {
	c.shard(k).misses.Add(1)
	c.put(k, v)
}

func (c *countCache) put(k cacheKey, v int) {
	s := c.shard(k)
	s.mu.Lock()
	if len(s.cur) >= c.half {
		s.old = s.cur
		s.cur = make(map[cacheKey]int32, c.half)
	}
	s.cur[k] = int32(v)
	s.mu.Unlock()
}

// stats sums the shards' lookups and cached counts.
func (c *countCache) stats() CacheStats {
	st := CacheStats{Entries: c.len(), Capacity: c.half * 2 * cacheShards}
	for i := range c.shards {
		st.Hits += c.shards[i].hits.Load()
		st.Misses += c.shards[i].misses.Load()
	}
	return st
}

// len reports the number of cached counts (both generations).
func (c *countCache) len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		n += len(s.cur) + len(s.old)
		s.mu.RUnlock()
	}
	return n
}
