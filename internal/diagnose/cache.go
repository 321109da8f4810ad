package diagnose

import (
	"hash/maphash"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/zeebo/xxh3"
)

// Cache remembers what Read made of an output: a stateless compile reads the
// same tool outputs again at every call, and reading runs regular
// expressions over every line. A policy that reads outputs keeps one for
// all the requests it serves. Safe for concurrent use; a nil Cache reads
// afresh every time.
//
// One Cache serves every caller: what it holds follows from the output
// alone, so a caller that finds an entry finds what it would have read
// itself. Its keys are hashed with a seed of its own, random, so that no
// caller can craft an output whose key is that of another caller's
// output and have its digest read in the other's place.
type Cache struct {
	digests *lru.Cache[uint64, *Digest]
	seed    uint64
}

// cacheEntries bounds a Cache.
const cacheEntries = 20_000

// NewCache returns an empty Cache.
func NewCache() *Cache {
	c, _ := lru.New[uint64, *Digest](cacheEntries)
	return &Cache{digests: c, seed: maphash.String(maphash.MakeSeed(), "diagnose.Cache")}
}

// CacheOr is shared, or a new Cache when there is no shared one: a policy
// built without one still remembers across the requests it serves.
func CacheOr(shared *Cache) *Cache {
	if shared == nil {
		return NewCache()
	}
	return shared
}

// Read is Read, remembered. The Digest returned is shared: callers must not
// change it (Lines and Identify take copies).
func (c *Cache) Read(output string) *Digest {
	if c == nil {
		d := Read(output)
		return &d
	}
	key := xxh3.HashStringSeed(output, c.seed) ^ uint64(len(output))<<40
	if d, ok := c.digests.Get(key); ok {
		return d
	}
	d := Read(output)
	c.digests.Add(key, &d)
	return &d
}

// Identify is Identify, remembered.
func (c *Cache) Identify(output string, l Limits) []string {
	d := *c.Read(output)
	d.Failed = true
	return d.Lines(l)
}
