package tokens

import (
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
)

// rankTable maps a BPE token's bytes to its merge rank. It holds no pointers
// for the garbage collector to trace: every token's bytes sit in one []byte
// and the open-addressing slots in one []rankSlot. The map[string]int the
// loader returns is some 300,000 strings for the built-in encodings, and the
// collector marked all of them on every cycle (about 4 ms of CPU each), a
// cost every request paid in proportion to what it allocated.
type rankTable struct {
	seed  maphash.Seed
	bytes []byte
	slots []rankSlot
	mask  uint64
}

// rankSlot is one table slot; n == 0 marks it empty (no token is empty).
type rankSlot struct {
	tag  uint32 // high bits of the hash, to skip most byte comparisons
	off  uint32
	n    uint32
	rank int32
}

func newRankTable(ranks map[string]int) (*rankTable, error) {
	size := 0
	for tok, r := range ranks {
		if tok == "" || r < 0 || r >= noRank {
			return nil, fmt.Errorf("token %q has rank %d: tokens are non-empty with ranks in [0, %d)", tok, r, noRank)
		}
		size += len(tok)
	}
	if size > math.MaxUint32 {
		return nil, fmt.Errorf("%d bytes of tokens do not fit 32-bit offsets", size)
	}
	// At most half full, so probes stay short.
	n := uint64(1) << bits.Len64(uint64(2*len(ranks)))
	t := &rankTable{seed: maphash.MakeSeed(), bytes: make([]byte, 0, size), slots: make([]rankSlot, n), mask: n - 1}
	for tok, r := range ranks {
		h := maphash.String(t.seed, tok)
		i := h & t.mask
		for t.slots[i].n != 0 {
			i = (i + 1) & t.mask
		}
		t.slots[i] = rankSlot{tag: uint32(h >> 32), off: uint32(len(t.bytes)), n: uint32(len(tok)), rank: int32(r)}
		t.bytes = append(t.bytes, tok...)
	}
	return t, nil
}

// get returns the rank of token s.
func (t *rankTable) get(s string) (int32, bool) {
	h := maphash.String(t.seed, s)
	tag := uint32(h >> 32)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		sl := &t.slots[i]
		if sl.n == 0 {
			return noRank, false
		}
		if sl.tag == tag && int(sl.n) == len(s) && string(t.bytes[sl.off:sl.off+sl.n]) == s {
			return sl.rank, true
		}
	}
}
