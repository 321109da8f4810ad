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
		{"coded lines first, then worded", "building\nthe pool timed out\nexecute EACCES\n", []string{"execute EACCES", "the pool timed out"}},
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

// TestNetworkFailures: a client that could not reach its server is named by
// the line that says so, whatever printed it and whatever its fields look
// like; source code that handles such an error, and the fields of an error
// object under its message, are not failures.
func TestNetworkFailures(t *testing.T) {
	grpcRefused := `2026/11/30 10:00:01 rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:50052: connect: connection refused"`
	tests := []struct {
		name    string
		content string
		want    []string
	}{
		{"a Go client's log line", "2026/11/30 10:00:01 starting client\n" + grpcRefused + "\nexit status 1\n", []string{grpcRefused}},
		{"Go's http.Get", `Get "http://127.0.0.1:9090/metrics": dial tcp 127.0.0.1:9090: connect: connection refused` + "\n",
			[]string{`Get "http://127.0.0.1:9090/metrics": dial tcp 127.0.0.1:9090: connect: connection refused`}},
		{"Node's error and its fields", "Error: connect ECONNREFUSED 127.0.0.1:5432\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1607:16) {\n  errno: -111,\n  code: 'ECONNREFUSED',\n  syscall: 'connect'\n}\n\nNode.js v20.20.2\n",
			[]string{"Error: connect ECONNREFUSED 127.0.0.1:5432"}},
		{"Python's logging format", "2024-03-01 10:00:00,123 - worker - INFO - picked job 42\n2024-03-01 10:00:00,456 - worker - ERROR - job 42 failed: Error 111 connecting to localhost:6379. Connection refused.\n",
			[]string{"2024-03-01 10:00:00,456 - worker - ERROR - job 42 failed: Error 111 connecting to localhost:6379. Connection refused."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Read(tt.content)
			if diff := cmp.Diff(tt.want, d.ProblemLines(false, DefaultLimits)); diff != "" {
				t.Errorf("ProblemLines (-want +got):\n%s", diff)
			}
		})
	}
	for _, clean := range []string{
		"1098\t    if (err && err.code === 'ECONNRESET') return onaborted();\n",
		"  code: 'ECONNREFUSED',\n",
		"retrying the connection (attempt 2 of 5)\n",
	} {
		if d := Read(clean); len(d.Findings) > 0 {
			t.Errorf("%q read as %q", clean, d.Findings[0].Lines)
		}
	}
}
