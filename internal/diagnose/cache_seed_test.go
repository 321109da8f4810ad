package diagnose

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCacheIsSeeded: two Caches hash with seeds of their own, and each
// reads an output as Read does, from memory the second time.
func TestCacheIsSeeded(t *testing.T) {
	a, b := NewCache(), NewCache()
	if a.seed == b.seed {
		t.Error("two Caches share a seed: it is not random")
	}
	out := "main.go:12:3: undefined: Foo\nFAIL\n"
	read := Read(out)
	want := read.Lines(DefaultLimits)
	for i := range 2 {
		if diff := cmp.Diff(want, a.Read(out).Lines(DefaultLimits)); diff != "" {
			t.Errorf("read %d (-Read +cached):\n%s", i, diff)
		}
	}
}
