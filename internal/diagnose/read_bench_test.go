package diagnose_test

import (
	"testing"

	"github.com/contextcompiler/ctxc/internal/diagnose"
	"github.com/contextcompiler/ctxc/internal/eval/corpus"
)

// BenchmarkReadRecorded reads every recorded real output once per
// iteration: what a session's first compile pays for its tool outputs.
func BenchmarkReadRecorded(b *testing.B) {
	cases, err := corpus.All()
	if err != nil {
		b.Fatal(err)
	}
	bytes := 0
	for _, c := range cases {
		bytes += len(c.Output)
	}
	b.SetBytes(int64(bytes))
	for b.Loop() {
		for _, c := range cases {
			diagnose.Read(c.Output)
		}
	}
}
