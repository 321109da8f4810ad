package diagnose

import (
	"strings"
	"testing"

	"github.com/contextcompiler/ctxc/internal/eval/corpus"
)

// TestRecordedOutputs reads every output of the recorded corpus (real tools
// run on projects with real bugs, labelled by reading them) and checks what
// a summary keeps of it: every identifying line of a failed output, and no
// envelope line in their place; an output that went through is not read as
// failed in its own words unless its labels say it failed.
func TestRecordedOutputs(t *testing.T) {
	cases, err := corpus.All()
	if err != nil {
		// corpus's own test fails on it; the well-formed cases are read here.
		t.Logf("malformed cases left out: %v", err)
	}
	for _, c := range cases {
		t.Run(c.ID, func(t *testing.T) {
			d := Read(c.Output)
			if !c.Meta.Failed {
				if d.Failed {
					t.Errorf("an output that went through is read as failed (envelope %q, findings %v)", d.Envelope, headlines(d))
				}
				// What a summary notes as trouble in it: only what its
				// labels call trouble.
				// A warning may be noted where the labels chose another or none
				// (which of a build's warnings matters is a judgement); an
				// error may not.
				if tr := d.Trouble(); tr != "" && !labelled(c.Meta.Trouble, tr) && errorFinding(d, tr) {
					t.Errorf("trouble read where the labels see none: %q", tr)
				}
				if len(c.Meta.Trouble) > 0 && d.Trouble() == "" {
					t.Errorf("trouble not read: %q", c.Meta.Trouble)
				}
				return
			}
			d.Failed = true
			got := collapse(strings.Join(d.Lines(DefaultLimits), "\n"))
			for _, want := range c.Meta.Identifying {
				// A line longer than the limit is kept elided (head and tail).
				if !strings.Contains(got, collapse(stripANSI(want))) && !grouped(d, want) &&
					!strings.Contains(got, collapse(Elide(stripANSI(want), DefaultLimits.Runes))) {
					t.Errorf("identifying line not kept: %q\nkept:\n%s", want, strings.Join(d.Lines(DefaultLimits), "\n"))
				}
			}
			if len(d.Findings) > 0 {
				for _, g := range c.Meta.Generic {
					if strings.Contains(got, collapse(g)) && !labelled(c.Meta.Identifying, g) {
						t.Errorf("envelope line kept beside findings: %q", g)
					}
				}
			}
		})
	}
}

func labelled(lines []string, l string) bool {
	for _, x := range lines {
		if strings.Contains(x, l) {
			return true
		}
	}
	return false
}

func headlines(d Digest) []string {
	var out []string
	for _, f := range d.Findings {
		out = append(out, f.Lines[0])
	}
	return out
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// grouped reports whether a diagnostic line was grouped with others of the
// same message: its location is listed with the first one's.
func grouped(d Digest, line string) bool {
	loc := location(line)
	for _, f := range d.Findings {
		if f.Count > 1 && loc != "" {
			for _, a := range f.Also {
				if a == loc {
					return true
				}
			}
		}
	}
	return false
}

func stripANSI(s string) string { return ansi.ReplaceAllString(s, "") }

func errorFinding(d Digest, headline string) bool {
	for _, f := range d.Findings {
		if f.Lines[0] == headline {
			return f.Severity == Error
		}
	}
	return false
}
