package policies

// chunked is a sequence kept in chunks of chunkLen items, so that growing
// it never copies what it holds: the ledger of a compile that disposes of
// most of a long log, and the tape of its writes, would otherwise copy
// themselves at every doubling. The first chunk grows by appends, so that
// a sequence of a few items allocates for those few; one that filled it
// holds many, and gets whole chunks.
type chunked[T any] struct {
	chunks [][]T
	n      int
}

// chunkLen is how many items a chunk holds at most.
const chunkLen = 1024

func (c *chunked[T]) add(v T) {
	if c.n%chunkLen == 0 {
		capacity := 8
		if c.n > 0 {
			capacity = chunkLen
		}
		c.chunks = append(c.chunks, make([]T, 0, capacity))
	}
	last := len(c.chunks) - 1
	c.chunks[last] = append(c.chunks[last], v)
	c.n++
}

// at is item i.
func (c *chunked[T]) at(i int) *T { return &c.chunks[i/chunkLen][i%chunkLen] }

// truncate keeps the first n items, clearing the others so that what they
// point to is not kept alive.
func (c *chunked[T]) truncate(n int) {
	if n >= c.n {
		return
	}
	keep := (n + chunkLen - 1) / chunkLen
	for _, ch := range c.chunks[keep:] {
		clear(ch)
	}
	c.chunks = c.chunks[:keep]
	if keep > 0 {
		last := c.chunks[keep-1]
		cut := n - (keep-1)*chunkLen
		clear(last[cut:])
		c.chunks[keep-1] = last[:cut]
	}
	c.n = n
}
