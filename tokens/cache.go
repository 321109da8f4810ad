package tokens

import "sync"

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
	_        [24]byte // 64 bytes a shard: one cache line each
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

func (c *countCache) get(k cacheKey) (int, bool) {
	s := c.shard(k)
	s.mu.RLock()
	v, ok := s.cur[k]
	if ok {
		s.mu.RUnlock()
		return int(v), true
	}
	v, ok = s.old[k]
	s.mu.RUnlock()
	if ok {
		c.put(k, int(v))
	}
	return int(v), ok
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
