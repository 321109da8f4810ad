package tokens

import (
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/zeebo/xxh3"
)

// The memo answers every string's own digest: the same string again, an
// equal string elsewhere in memory, and strings that start at the same
// address with other lengths (prefixes of one another).
func TestDigestMemoAnswersEachStringsOwnDigest(t *testing.T) {
	m := newDigestMemo()
	const seed = 42
	r := rand.New(rand.NewPCG(1, 2))
	long := make([]byte, 8<<10)
	for i := range long {
		long[i] = byte('a' + r.IntN(26))
	}
	whole := string(long)
	check := func(label, s string) {
		t.Helper()
		if got, want := m.digest(s, seed), xxh3.HashStringSeed(s, seed); got != want {
			t.Fatalf("%s (%d bytes): digest %x, want %x", label, len(s), got, want)
		}
	}
	for range 3 { // kept the first time, answered from the memo after
		for _, n := range []int{100, 255, 256, 300, 1000, 4096, len(whole)} {
			check("prefix", whole[:n])
			check("suffix", whole[len(whole)-n:])
			check("copy", strings.Clone(whole[:n]))
		}
	}
	kept := 0
	for i := range m.shards {
		for _, e := range m.shards[i].slots {
			if e.s != "" {
				kept++
			}
		}
	}
	if kept == 0 {
		t.Fatal("the memo kept nothing")
	}
}

// A shard keeps at most digestShardBytes of strings, so the memo keeps
// alive at most digestMemoBytes, and a string longer than a shard's bound
// is not kept.
func TestDigestMemoStaysInItsBound(t *testing.T) {
	m := newDigestMemo()
	var strs []string
	for i := range 8000 {
		strs = append(strs, strings.Repeat(string(rune('a'+i%26)), 300+i%12000))
		m.digest(strs[i], 1)
	}
	m.digest(strings.Repeat("x", digestShardBytes+1), 1)
	total := 0
	for i := range m.shards {
		sh := &m.shards[i]
		held := 0
		for _, e := range sh.slots {
			held += len(e.s)
			if len(e.s) > digestShardBytes {
				t.Fatalf("a string of %d bytes was kept", len(e.s))
			}
		}
		if held != sh.bytes || held > digestShardBytes {
			t.Fatalf("shard %d holds %d bytes (counted %d), bound %d", i, held, sh.bytes, digestShardBytes)
		}
		total += held
	}
	if total > digestMemoBytes {
		t.Fatalf("the memo keeps %d bytes of strings alive, over %d", total, digestMemoBytes)
	}
	if total < digestMemoBytes/4 {
		t.Fatalf("the memo keeps only %d bytes of %d strings: it hardly remembers", total, len(strs))
	}
}

func TestDigestMemoIsSafeForConcurrentUse(t *testing.T) {
	m := newDigestMemo()
	strs := make([]string, 64)
	for i := range strs {
		strs[i] = strings.Repeat(string(rune('A'+i%26)), 256+i*37)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				s := strs[(g*13+i)%len(strs)]
				if got, want := m.digest(s, 7), xxh3.HashStringSeed(s, 7); got != want {
					t.Errorf("digest %x, want %x", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
