package facts_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/eval/corpus"
	"github.com/contextcompiler/ctxc/internal/facts"
)

// The prefilter only skips patterns that cannot match: on every line of
// every recorded tool output, and on every fuzzed text, Identifiers finds
// what running every pattern finds.
func TestPrefilterKeepsEveryIdentifierOfRecordedOutputs(t *testing.T) {
	cases, err := corpus.All()
	if err != nil {
		t.Fatal(err)
	}
	lines, found := 0, 0
	for _, c := range cases {
		for _, line := range strings.Split(c.Output, "\n") {
			want := facts.IdentifiersUnfiltered(line)
			if diff := cmp.Diff(want, facts.Identifiers(line)); diff != "" {
				t.Errorf("%s: %q (-all patterns +prefiltered):\n%s", c.ID, line, diff)
			}
			lines++
			found += len(want)
		}
	}
	if lines < 1000 || found < 1000 {
		t.Fatalf("read %d lines holding %d identifiers: the corpus should give thousands", lines, found)
	}
}

func FuzzPrefilterKeepsEveryIdentifier(f *testing.F) {
	for _, s := range []string{
		"E1234 TS2304 ERR404 ORA-00942 CVE-2024-1234 SQLSTATE 23505", "ERR_CONN_RESET ECONNREFUSED",
		"java.lang.NullPointerException OOMKilled", "HTTP/1.1 503, exit status 137, Code: 42",
		"internal/stock/reserve.go:42 ./cmd/main.go", "v1.2.3 3.11.7-rc1 #4512 deadbeef1", "message number 12 says hello",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if diff := cmp.Diff(facts.IdentifiersUnfiltered(text), facts.Identifiers(text)); diff != "" {
			t.Errorf("%q (-all patterns +prefiltered):\n%s", text, diff)
		}
	})
}
