package tokens

import (
	"fmt"
	"math"
	"sync"
)

// smallPiece is the longest piece merged with tiktoken's own quadratic scan;
// longer pieces use the heap, whose bookkeeping only pays off beyond this.
const smallPiece = 64

const noRank = math.MaxInt32

// encoder counts tokens of one BPE encoding. Safe for concurrent use; its
// table is built once, on first use.
type encoder struct {
	name  string
	id    uint8
	split splitFunc
	// The rank table is built on first use (load): most processes need one
	// encoding of the three, and building one takes a tenth of a second.
	once  sync.Once
	load  func() (*rankTable, error)
	ranks *rankTable
	err   error
}

// ready builds the rank table once; an error is the embedded data's, which
// tests load, so it means a damaged binary.
func (e *encoder) ready() error {
	e.once.Do(func() { e.ranks, e.err = e.load() })
	return e.err
}

// count returns how many tokens s encodes to, special-token text counting as
// ordinary text (as tiktoken's encode_ordinary does).
func (e *encoder) count(s string) int {
	n, _ := e.countUntil(s, nil)
	return n
}

// stopCheckEvery is how many pieces, or merges of one long piece, are
// counted between two looks at whether to stop: a look costs a few
// nanoseconds, this many merges about a millisecond.
const stopCheckEvery = 1 << 12

// countUntil is count, cut short once done is closed (nil: never): then the
// count is approximate (each byte not yet counted a token) and complete is
// false, and the caller must not keep it.
func (e *encoder) countUntil(s string, done <-chan struct{}) (n int, complete bool) {
	if err := e.ready(); err != nil {
		panic(fmt.Sprintf("tokens: encoding %s: %v", e.name, err))
	}
	for start, pieces := 0, 0; start < len(s); pieces++ {
		if done != nil && pieces%stopCheckEvery == 0 && stopped(done) {
			return n + len(s) - start, false
		}
		end := e.split(s, start)
		c, ok := e.countPiece(s[start:end], done)
		n += c
		if !ok {
			return n + len(s) - end, false
		}
		start = end
	}
	return n, true
}

// stopped reports whether done is closed.
func stopped(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// countPiece counts the tokens of one pre-tokenized piece; a long one is cut
// short once done is closed (see countUntil).
func (e *encoder) countPiece(p string, done <-chan struct{}) (int, bool) {
	if len(p) <= 1 {
		return len(p), true
	}
	if _, ok := e.ranks.get(p); ok {
		return 1, true
	}
	if len(p) <= smallPiece {
		return e.mergeSmall(p), true
	}
	return e.mergeHeap(p, done)
}

func (e *encoder) rank(s string) int32 {
	r, _ := e.ranks.get(s)
	return r
}

// mergeSmall is tiktoken's byte_pair_merge: repeatedly merge the adjacent pair
// of lowest rank (leftmost on ties). Quadratic, but on at most smallPiece bytes.
func (e *encoder) mergeSmall(p string) int {
	var startsBuf [smallPiece + 1]int32
	var ranksBuf [smallPiece + 1]int32
	starts := startsBuf[:len(p)+1]
	ranks := ranksBuf[:len(p)+1]
	for i := range starts {
		starts[i] = int32(i)
		ranks[i] = noRank
	}
	for i := 0; i+2 <= len(p); i++ {
		ranks[i] = e.rank(p[i : i+2])
	}
	// pairRank is the rank of parts i and i+1 merged, given the current starts.
	pairRank := func(i int) int32 {
		if i+2 < len(starts) {
			return e.rank(p[starts[i]:starts[i+2]])
		}
		return noRank
	}
	for len(starts) > 2 {
		minRank, minAt := int32(noRank), -1
		for i := 0; i < len(ranks)-1; i++ {
			if ranks[i] < minRank {
				minRank, minAt = ranks[i], i
			}
		}
		if minAt < 0 {
			break
		}
		copy(starts[minAt+1:], starts[minAt+2:])
		starts = starts[:len(starts)-1]
		copy(ranks[minAt+1:], ranks[minAt+2:])
		ranks = ranks[:len(ranks)-1]
		ranks[minAt] = pairRank(minAt)
		if minAt > 0 {
			ranks[minAt-1] = pairRank(minAt - 1)
		}
	}
	return len(starts) - 1
}

// mergeHeap applies the same merges as mergeSmall in O(n log n): parts form a
// linked list, candidate pairs sit in a min-heap keyed by (rank, start), and
// entries made stale by a neighbour's merge are skipped when popped. A pair's
// rank only changes by growing its byte span, and ranks map to distinct byte
// strings, so an entry is current exactly when its part is alive and its rank
// equals the part's current pair rank. Ordering by start keeps tiktoken's
// leftmost-on-ties rule.
// Once done is closed it stops, answering the parts left (more tokens than
// the piece has) and false.
func (e *encoder) mergeHeap(p string, done <-chan struct{}) (int, bool) {
	n := len(p)
	next := make([]int32, n+1)
	prev := make([]int32, n+1)
	pair := make([]int32, n+1)
	heap := make(minHeap, 0, n)
	for i := 0; i <= n; i++ {
		// Touching fresh memory is slow (a 20 MB piece: 2 s on a VM), so
		// even this loop looks at done.
		if done != nil && i%stopCheckEvery == 0 && stopped(done) {
			return n, false
		}
		next[i] = int32(i + 1)
		prev[i] = int32(i - 1)
		pair[i] = noRank
	}
	for i := 0; i+2 <= n; i++ {
		if done != nil && i%stopCheckEvery == 0 && stopped(done) {
			return n, false
		}
		if r := e.rank(p[i : i+2]); r != noRank {
			pair[i] = r
			heap = append(heap, heapKey(r, i))
		}
	}
	if !heap.init(done) {
		return n, false
	}
	parts := n
	// rankAfter is the rank of part i merged with its successor.
	rankAfter := func(i int32) int32 {
		j := next[i]
		if int(j) >= n {
			return noRank
		}
		return e.rank(p[i:next[j]])
	}
	for pops := 1; len(heap) > 0; pops++ {
		if done != nil && pops%stopCheckEvery == 0 && stopped(done) {
			return parts, false
		}
		k := heap.pop()
		r, i := int32(k>>32), int32(uint32(k))
		if pair[i] != r || prev[i] == -2 {
			continue // stale
		}
		// Merge part i with its successor j.
		j := next[i]
		next[i] = next[j]
		if int(next[j]) <= n {
			prev[next[j]] = i
		}
		prev[j] = -2 // dead
		pair[j] = noRank
		parts--
		if pair[i] = rankAfter(i); pair[i] != noRank {
			heap.push(heapKey(pair[i], int(i)))
		}
		if h := prev[i]; h >= 0 {
			if pair[h] = rankAfter(h); pair[h] != noRank {
				heap.push(heapKey(pair[h], int(h)))
			}
		}
	}
	return parts, true
}

func heapKey(rank int32, start int) uint64 { return uint64(rank)<<32 | uint64(uint32(start)) }

// minHeap is a binary min-heap of packed (rank, start) keys.
type minHeap []uint64

// init orders the heap; false when done was closed first (nil: never).
func (h minHeap) init(done <-chan struct{}) bool {
	for i := len(h)/2 - 1; i >= 0; i-- {
		if done != nil && i%stopCheckEvery == 0 && stopped(done) {
			return false
		}
		h.down(i)
	}
	return true
}

func (h *minHeap) push(k uint64) {
	*h = append(*h, k)
	s := *h
	i := len(s) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if s[parent] <= s[i] {
			break
		}
		s[parent], s[i] = s[i], s[parent]
		i = parent
	}
}

func (h *minHeap) pop() uint64 {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	*h = s[:last]
	h.down(0)
	return top
}

func (h minHeap) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h[r] < h[l] {
			m = r
		}
		if h[i] <= h[m] {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
