package diagnose

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// A line longer than scanLineBytes is read by its head: what is found in
// it is what is found in its first scanLineBytes, and no line read back is
// longer. (A line of 20 MB took the patterns 0.7 s.)
func TestLongLinesReadByTheirHead(t *testing.T) {
	for _, line := range []string{
		"FAILED tests/test_api.py::test_login - AssertionError: " + strings.Repeat("x", 2*scanLineBytes),
		"src/main.go:12:3: undefined: " + strings.Repeat("é", scanLineBytes),
		strings.Repeat("a", 20<<20),
	} {
		out := "collected 3 items\n" + line + "\nexit status 1\n"
		head := line[:scanLineBytes]
		for !strings.HasSuffix(head, "x") && !strings.HasSuffix(head, "é") && !strings.HasSuffix(head, "a") {
			head = head[:len(head)-1]
		}
		got, want := Read(out), Read("collected 3 items\n"+head+"\nexit status 1\n")
		if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Finding{})); diff != "" {
			t.Errorf("line of %d bytes: read otherwise than its head (-head +whole):\n%s", len(line), diff[:min(len(diff), 2000)])
		}
		for _, f := range got.Findings {
			for _, l := range f.Lines {
				if len(l) > scanLineBytes {
					t.Errorf("a finding quotes a line of %d bytes", len(l))
				}
			}
		}
	}
}
