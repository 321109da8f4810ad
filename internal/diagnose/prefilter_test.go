package diagnose

import (
	"strings"
	"testing"

	"github.com/contextcompiler/ctxc/internal/eval/corpus"
)

// checkPrefilters fails when a cheap check said no to a line that the
// expression it guards matches: the checks may only skip work.
func checkPrefilters(t *testing.T, line string) {
	t.Helper()
	if !mayBeContext(line) && contextLine.MatchString(line) {
		t.Errorf("mayBeContext(%q) is false; contextLine matches", line)
	}
	if !hasLocation(line) && locPrefix.MatchString(line) {
		t.Errorf("hasLocation(%q) is false; locPrefix matches", line)
	}
	if !mayBeEnvelope(line) && (exitStatus.MatchString(line) || envelopeRes.MatchString(line)) {
		t.Errorf("mayBeEnvelope(%q) is false; an envelope expression matches", line)
	}
	if logLevel(line) != Plain != logLine.MatchString(line) {
		t.Errorf("logLevel(%q) disagrees with logLine", line)
	}
	if saysStatus(line) != statusPhrase.MatchString(line) {
		t.Errorf("saysStatus(%q) disagrees with statusPhrase", line)
	}
}

// prefilterSeeds match each guarded expression, and come close to it.
var prefilterSeeds = []string{
	"main.go:12:3: undefined: x", "# example.com/pkg", "In file included from a.h:1,", "   from b.c:3:", "x.c: In function 'main':",
	"x.cc: At global scope:", "x.ts(3,4): error TS2304", "a.c:[1,2] warn", "Makefile:12: *** missing separator",
	"exit status 2", "Process exited with code 1", "RETURN CODE: 3", "make: *** [all] Error 2", "FAIL\tpkg\t0.01s",
	"tar: Exiting with failure status due to previous errors", "✖ 3 problems (3 errors, 0 warnings)", "compilation terminated.",
	"2025-04-29T14:00:40Z WARN [w-1] slow", "level=error msg=boom", "[ERROR] x", "HTTP/1.1 503 Service Unavailable",
	"status code 429", "returned 404", "Response Code: 500", "exit code 137", "ſtatus 503", "HTTP 5O3", "nothing here",
}

// TestPrefiltersNeverHideAMatch: over every line of the recorded real
// outputs and the seeds above, a cheap check says no only where its
// expression does.
func TestPrefiltersNeverHideAMatch(t *testing.T) {
	cases, err := corpus.All()
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, c := range cases {
		for _, line := range strings.Split(c.Output, "\n") {
			checkPrefilters(t, strings.TrimSpace(line))
			lines++
		}
	}
	for _, s := range prefilterSeeds {
		checkPrefilters(t, s)
	}
	if lines < 1000 {
		t.Errorf("only %d recorded lines", lines)
	}
}

func FuzzPrefiltersNeverHideAMatch(f *testing.F) {
	for _, s := range prefilterSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) { checkPrefilters(t, line) })
}
