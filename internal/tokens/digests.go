package tokens

import (
	"sync"
	"unsafe"

	"github.com/zeebo/xxh3"
)

// digestMemo remembers the xxh3 digests of long strings by identity: the
// address of their bytes, checked with their length. An entry holds its
// string, so while it lives no other string can take that address, and Go
// strings never change: the same address and length is the same content.
// A call by reference compiles a log whose strings are the very strings an
// earlier call decoded (the server keeps the decoded log), and so finds
// every digest here instead of hashing the whole log again on every turn
// (docs/ARCHITECTURE.md, "Calls by reference").
//
// It holds two generations of at most digestMemoBytes of string bytes
// each: when the newer one fills up, the older one is dropped, with the
// strings only it kept alive.
type digestMemo struct {
	shards [digestShards]digestShard
}

const (
	// digestMemoBytes bounds one generation of a shard set: the memo keeps
	// alive at most twice this many bytes of strings it hashed (32 MiB).
	digestMemoBytes = 16 << 20
	// digestMinBytes: a shorter string is hashed as fast as it is looked up.
	digestMinBytes = 256
	digestShards   = 16
	// digestShardBytes bounds a generation of one shard; a longer string
	// is not kept.
	digestShardBytes = digestMemoBytes / digestShards
)

type digestShard struct {
	mu       sync.Mutex
	cur, old map[uintptr]digestEntry
	curBytes int
}

type digestEntry struct {
	s string
	h uint64
}

func newDigestMemo() *digestMemo { return &digestMemo{} }

// digest returns s's xxh3 digest under seed, from the memo when s is a
// string it holds. The memo belongs to one seed.
func (m *digestMemo) digest(s string, seed uint64) uint64 {
	if m == nil || len(s) < digestMinBytes || len(s) > digestShardBytes {
		return xxh3.HashStringSeed(s, seed)
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	sh := &m.shards[(p>>8)%digestShards]
	sh.mu.Lock()
	e, ok := sh.cur[p]
	if !ok {
		if e, ok = sh.old[p]; ok && len(e.s) == len(s) {
			sh.add(p, e)
		}
	}
	sh.mu.Unlock()
	if ok && len(e.s) == len(s) {
		return e.h
	}
	h := xxh3.HashStringSeed(s, seed)
	sh.mu.Lock()
	sh.add(p, digestEntry{s: s, h: h})
	sh.mu.Unlock()
	return h
}

// add keeps e under p in the newer generation, starting a new one when it
// is full.
func (sh *digestShard) add(p uintptr, e digestEntry) {
	if sh.cur == nil || sh.curBytes+len(e.s) > digestShardBytes {
		sh.old, sh.cur, sh.curBytes = sh.cur, make(map[uintptr]digestEntry), 0
	}
	if old, ok := sh.cur[p]; ok {
		sh.curBytes -= len(old.s)
	}
	sh.cur[p] = e
	sh.curBytes += len(e.s)
}
