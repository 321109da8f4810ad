package diagnose

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// TestUnstructuredOutput: an output no reader recognizes is named by its
// lines with error words, a code first, each once; else by its envelope;
// else by its last line; a long line keeps its start and its cause.
func TestUnstructuredOutput(t *testing.T) {
	long := "failed to register layer: write /var/lib/docker/overlay2/" + strings.Repeat("0a9d", 200) + "/diff/usr/lib/libicu.so.72: no space left on device (ENOSPC)"
	tests := []struct {
		name    string
		content string
		want    []string
	}{
		{"coded lines first, then worded", "building\nthe pool timed out\nconnect ECONNRESET\n", []string{"connect ECONNRESET", "the pool timed out"}},
		{"the last line when no line reports an error", "building...\nlinking...\ndone in 3s\n", []string{"done in 3s"}},
		{"the envelope when nothing names more", "FAIL\nexit status 1\n", []string{"FAIL", "exit status 1"}},
		{"a long line keeps its cause at the end", long, []string{Elide(long, DefaultLimits.Runes)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Identify(tt.content, DefaultLimits)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Identify (-want +got):\n%s", diff)
			}
		})
	}
	if got := Identify(long, DefaultLimits)[0]; !strings.HasSuffix(got, "no space left on device (ENOSPC)") || !strings.HasPrefix(got, "failed to register layer") {
		t.Errorf("elided error line lost its start or its cause: %q", got)
	}
}

func TestElide(t *testing.T) {
	for _, n := range []int{8, 20, 60, 160} {
		for _, line := range []string{
			strings.Repeat("word ", 80),
			strings.Repeat("x", 500),
			"short",
			"héllo wörld " + strings.Repeat("ü", 300) + " the end",
		} {
			got := Elide(line, n)
			if utf8.RuneCountInString(line) <= n {
				if got != line {
					t.Errorf("Elide(%q, %d) changed a line that fits: %q", line, n, got)
				}
				continue
			}
			if c := utf8.RuneCountInString(got); c > n+1 {
				t.Errorf("Elide(…, %d) is %d runes: %q", n, c, got)
			}
			if !strings.Contains(got, "…") || !utf8.ValidString(got) {
				t.Errorf("Elide(…, %d) = %q: no mark or invalid UTF-8", n, got)
			}
		}
	}
}
