package policies

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A chunked sequence holds what a plain slice would under any run of adds
// and truncations, across chunk boundaries; no chunk but the first is ever
// reallocated by an add.
func TestChunkedIsASlice(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 7))
		var c chunked[int]
		var model []int
		for step := range 200 {
			if r.IntN(4) == 0 && len(model) > 0 {
				n := r.IntN(len(model) + 1)
				c.truncate(n)
				model = model[:n]
				continue
			}
			for range r.IntN(3 * chunkLen) {
				c.add(step)
				model = append(model, step)
			}
		}
		var got []int
		for i, ch := range c.chunks {
			if i > 0 && cap(ch) != chunkLen {
				t.Fatalf("seed %d: chunk %d has capacity %d, want %d", seed, i, cap(ch), chunkLen)
			}
			got = append(got, ch...)
		}
		if diff := cmp.Diff(model, got); diff != "" || c.n != len(model) {
			t.Fatalf("seed %d: n %d, want %d; items (-slice +chunked):\n%s", seed, c.n, len(model), diff)
		}
		if len(model) > 0 {
			i := r.IntN(len(model))
			if *c.at(i) != model[i] {
				t.Errorf("seed %d: at(%d) = %d, want %d", seed, i, *c.at(i), model[i])
			}
		}
	}
}
