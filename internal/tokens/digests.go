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
// Each shard is a direct-mapped table of digestSlots entries, so keeping
// one costs a store, not a map insert: a stateless call, whose strings are
// new every time, pays little for a memo it does not use. A shard holds at
// most digestShardBytes of strings; one that would pass it starts empty.
type digestMemo struct {
	shards [digestShards]digestShard
}

const (
	// digestMemoBytes bounds the strings the memo keeps alive.
	digestMemoBytes = 32 << 20
	// digestMinBytes: a shorter string is hashed as fast as it is looked up.
	digestMinBytes = 256
	digestShards   = 16
	// digestSlots is a shard's table size (a power of two).
	digestSlots = 2048
	// digestShardBytes bounds the strings one shard keeps; a longer string
	// is not kept.
	digestShardBytes = digestMemoBytes / digestShards
)

type digestShard struct {
	mu    sync.Mutex
	slots [digestSlots]digestEntry
	bytes int
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
	// Strings this long are at least 256 bytes apart: the bits above those
	// pick the shard and the slot.
	x := uint64(p>>8) * 0x9e3779b97f4a7c15
	sh := &m.shards[x>>60]
	e := &sh.slots[(x>>40)&(digestSlots-1)]
	sh.mu.Lock()
	if len(e.s) == len(s) && unsafe.StringData(e.s) == unsafe.StringData(s) {
		h := e.h
		sh.mu.Unlock()
		return h
	}
	sh.mu.Unlock()
	h := xxh3.HashStringSeed(s, seed)
	sh.mu.Lock()
	if sh.bytes-len(e.s)+len(s) > digestShardBytes {
		sh.slots, sh.bytes = [digestSlots]digestEntry{}, 0
	}
	sh.bytes += len(s) - len(e.s)
	*e = digestEntry{s: s, h: h}
	sh.mu.Unlock()
	return h
}
