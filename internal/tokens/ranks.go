package tokens

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"strconv"
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

// parseRankTable builds the table straight from a .tiktoken file (one
// "<base64 token> <rank>" per line), as tiktoken-go-loader embeds them. The
// loader's own LoadTiktokenBpe builds a map[string]int of every token first,
// which this table used to be copied from: most of the ~90 ms a process paid
// before its first count (`ctxc compile` pays it on every run).
func parseRankTable(file []byte) (*rankTable, error) {
	lines := bytes.Count(file, []byte{'\n'}) + 1
	n := uint64(1) << bits.Len64(uint64(2*lines))
	// Base64 holds at most 3 bytes in 4: room for every token's bytes.
	size := base64.StdEncoding.DecodedLen(len(file))
	if size > math.MaxUint32 {
		return nil, fmt.Errorf("%d bytes of tokens do not fit 32-bit offsets", size)
	}
	t := &rankTable{seed: maphash.MakeSeed(), bytes: make([]byte, 0, size), slots: make([]rankSlot, n), mask: n - 1}
	for lineNo := 1; len(file) > 0; lineNo++ {
		line := file
		if i := bytes.IndexByte(file, '\n'); i >= 0 {
			line, file = file[:i], file[i+1:]
		} else {
			file = nil
		}
		if len(line) == 0 {
			continue
		}
		b64, num, ok := bytes.Cut(line, []byte{' '})
		if !ok {
			return nil, fmt.Errorf("line %d: want <base64 token> <rank>", lineNo)
		}
		r, err := strconv.Atoi(string(num))
		if err != nil || r < 0 || r >= noRank {
			return nil, fmt.Errorf("line %d: rank %q: want an integer in [0, %d)", lineNo, num, noRank)
		}
		off := len(t.bytes)
		t.bytes = t.bytes[:off+base64.StdEncoding.DecodedLen(len(b64))]
		m, err := base64.StdEncoding.Decode(t.bytes[off:], b64)
		if err != nil || m == 0 {
			return nil, fmt.Errorf("line %d: token %q: want non-empty base64 (%v)", lineNo, b64, err)
		}
		t.bytes = t.bytes[:off+m]
		tok := t.bytes[off:]
		h := maphash.Bytes(t.seed, tok) // as maphash.String of the same bytes, which get uses
		i := h & t.mask
		for ; t.slots[i].n != 0; i = (i + 1) & t.mask {
			if sl := &t.slots[i]; sl.tag == uint32(h>>32) && int(sl.n) == m && bytes.Equal(t.bytes[sl.off:sl.off+sl.n], tok) {
				return nil, fmt.Errorf("line %d: token %q appears twice", lineNo, b64)
			}
		}
		t.slots[i] = rankSlot{tag: uint32(h >> 32), off: uint32(off), n: uint32(m), rank: int32(r)}
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
