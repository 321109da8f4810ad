// Package diagnose owns the structural reading of tool output: which lines of
// what a compiler, linter, test runner, interpreter, client, database or
// shell printed say what failed and where. It reads structure, not words: a
// diagnostic is a line that starts with a source location; an exception is a
// typed headline above or below a stack of frames, of which the innermost in
// the project's own code is kept; a failing test is its runner's failure
// marker with the assertion under it; a client's refusal is its status line.
// Lines that only say that something failed ("FAIL", "exit status 1",
// "make: *** [all] Error 2") are envelopes, used only when nothing more
// specific was printed.
//
// The summarizers, observation masking and the boundary records use it so
// that a failed tool call is never remembered by its envelope. It knows no
// policy or stage.
package diagnose

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Kind is what a finding reports.
type Kind uint8

// Kinds of findings.
const (
	// Diagnostic is a compiler's, type checker's or linter's message at a
	// source location.
	Diagnostic Kind = iota + 1
	// Exception is an exception, a panic, a crash or a sanitizer's report,
	// with the innermost frame of the project's own code.
	Exception
	// Race is a data race report with the racing accesses' frames.
	Race
	// Test is a failing test: its name and its assertion.
	Test
	// Status is a client's, server's, database's or installer's error: an
	// HTTP or gRPC status, an SQL error, a command that could not run.
	Status
)

var kindNames = [...]string{"", "diagnostic", "exception", "race", "test", "status"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && k > 0 {
		return kindNames[k]
	}
	return "kind?"
}

// Severity says how bad a finding is.
type Severity uint8

// Severities, mildest first.
const (
	Warning Severity = iota + 1
	Error
)

// Finding is one thing an output reports as wrong.
type Finding struct {
	Kind     Kind
	Severity Severity
	// Lines are the output's own lines that identify it, trimmed, most
	// telling first: the diagnostic, the exception line and then the frame,
	// the test's name and then its assertion.
	Lines []string
	// Count is how many times the output reported it (identical findings at
	// other locations are grouped into one).
	Count int
	// Also lists the locations of the grouped repeats, in order.
	Also []string
	// key groups identical findings: the headline without its location.
	key string
	// end is the index of the line after the finding in the output read.
	end int
	// logged: a program's log record, trouble it reports rather than the
	// command failing.
	logged bool
}

// Digest is what an output says about failure.
type Digest struct {
	// Findings in the order the output reported them.
	Findings []Finding
	// Failed says the output reports in its own words that its command
	// failed: a non-zero exit status, a runner's failure summary, an error
	// finding of a test, an exception or a race.
	Failed bool
	// Envelope holds the lines that only say that something failed.
	Envelope []string
	// Fallback holds lines that use error words without any structure the
	// reader knows, most plainly erroneous first; used when there is no
	// finding.
	Fallback []string
	// Last is the output's last non-empty line.
	Last string
}

// Limits bound how much of a digest Lines renders.
type Limits struct {
	// Findings is the most findings shown; the rest are counted.
	Findings int
	// LinesPerFinding is the most lines shown of one finding.
	LinesPerFinding int
	// Runes cuts a longer line in the middle (Elide).
	Runes int
}

// DefaultLimits suit a summary's record of one failed call.
var DefaultLimits = Limits{Findings: 8, LinesPerFinding: 5, Runes: 600}

// LineSep joins the lines of one finding on one line. Not " | ": type
// checkers print unions that way ("Decimal | None"), and a reader that cuts
// a finding to its first line must not cut inside one.
const LineSep = " ¦ "

// Lines renders what identifies a failed output, within limits, one line a
// finding: its lines joined by LineSep, a grouped finding's headline followed
// by its count and other locations; the error findings (warnings only when
// there is no error; a diagnostic that names no severity is an error when
// the output failed), and a closing line counting what did not fit. Without
// any finding: the fallback lines, else the envelope, else the last line.
func (d *Digest) Lines(l Limits) []string {
	fs := d.errors()
	if len(fs) == 0 {
		return d.unstructured(l)
	}
	fs, rest := pick(fs, l.Findings)
	var out []string
	for _, f := range fs {
		lines := f.Lines
		n := l.LinesPerFinding
		if f.Kind == Test && n == 1 {
			n = 2 // a failing test's name says which; its assertion what
		}
		if len(lines) > n {
			lines = lines[:n]
		}
		parts := make([]string, len(lines))
		for k, line := range lines {
			parts[k] = Elide(line, l.Runes)
		}
		if f.Count > 1 {
			parts[0] += repeats(f)
		}
		out = append(out, strings.Join(parts, LineSep))
	}
	if len(rest) > 0 {
		out = append(out, moreLine(rest))
	}
	return out
}

// pick chooses n findings to show, in their order: failing tests, races
// and exceptions before diagnostics and statuses (a test run's stack traces
// and its runner's list of failures say the same thing twice: the list
// names the tests), then the earliest up to half, then the first of each
// file not yet shown (errors in three packages are three failures, not
// one), then the earliest.
func pick(fs []Finding, n int) (shown, rest []Finding) {
	if len(fs) <= n {
		return fs, nil
	}
	chosen := make([]bool, len(fs))
	files := map[string]bool{}
	fileOf := make([]string, len(fs))
	for i, f := range fs {
		fileOf[i], _, _ = strings.Cut(findingLocation(f), ":")
	}
	count := 0
	for _, kind := range []Kind{Race, Test, Exception} {
		for i, f := range fs {
			if count < n && f.Kind == kind && f.Severity == Error && !chosen[i] {
				chosen[i] = true
				count++
			}
		}
	}
	for i := range fs {
		if count < n/2 && !chosen[i] {
			chosen[i] = true
			count++
		}
	}
	for i := range fs {
		if chosen[i] {
			files[fileOf[i]] = true
		}
	}
	for i := range fs {
		file := fileOf[i]
		if count < n && file != "" && !files[file] && !chosen[i] {
			files[file] = true
			chosen[i] = true
			count++
		}
	}
	for i := range fs {
		if count < n && !chosen[i] {
			chosen[i] = true
			count++
		}
	}
	for i, f := range fs {
		if chosen[i] {
			shown = append(shown, f)
		} else {
			rest = append(rest, f)
		}
	}
	return shown, rest
}

// errors returns what Lines shows: the error findings, with plain ones when
// the output failed; else the warnings.
func (d *Digest) errors() []Finding {
	var errs, warns, logged []Finding
	for _, f := range d.Findings {
		switch {
		case f.Severity == Error, f.Severity == Plain && d.Failed:
			errs = append(errs, f)
		case f.Severity == Warning && f.logged:
			logged = append(logged, f)
		case f.Severity == Warning:
			warns = append(warns, f)
		}
	}
	if len(errs) == 0 {
		// A program's warnings in its log ("slow call") say what went
		// wrong only when nothing else does.
		warns = append(warns, logged...)
	}
	// Warnings fill what room errors leave: in a failed C build an implicit
	// declaration is often the cause.
	return append(errs, warns...)
}

// unstructured is what Lines shows of an output without findings.
func (d *Digest) unstructured(l Limits) []string {
	var out []string
	for _, src := range [][]string{d.Fallback, d.Envelope} {
		for _, line := range src {
			if len(out) < max(1, l.Findings/2) {
				out = append(out, Elide(line, l.Runes))
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	if d.Last != "" {
		return []string{Elide(d.Last, l.Runes)}
	}
	return nil
}

// Headlines renders one line a finding, the first of each, grouped repeats
// counted: the shortest form that still names every failure.
func (d *Digest) Headlines(l Limits) []string {
	return d.Lines(Limits{Findings: l.Findings, LinesPerFinding: 1, Runes: l.Runes})
}

// Trouble returns the headline of the first finding an output that went
// through reports in so many words (a severity, a failing test, an
// exception, a race, an error status), else of its first warning; "" for
// none.
func (d *Digest) Trouble() string {
	for _, sev := range []Severity{Error, Warning} {
		for _, f := range d.Findings {
			if f.Severity == sev {
				return f.Lines[0]
			}
		}
	}
	return ""
}

// ProblemLines renders what identifies what went wrong in an output, whether
// or not its command failed: for one that failed (failed, or Failed in its
// own words) what Identify renders; for one that went through, its error
// findings (a panic in a server's log, a failing case of a passing run);
// nothing for a clean one. A cut, a placeholder or a note that keeps these
// keeps what an agent in the middle of a task is looking for.
func (d *Digest) ProblemLines(failed bool, l Limits) []string {
	if failed || d.Failed {
		c := *d
		c.Failed = true
		return c.Lines(l)
	}
	if d.Trouble() == "" {
		return nil
	}
	var errs []Finding
	for _, f := range d.Findings {
		if f.Severity == Error {
			errs = append(errs, f)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	c := Digest{Findings: errs}
	return c.Lines(l)
}

// Evidence returns the output's own lines, trimmed, that say what went wrong
// (those ProblemLines renders from: every error finding's lines, the plain
// ones too when the command failed; without a finding, for a failed output,
// its fallback lines), each once, in finding order, at most n. A cut that
// keeps them keeps the failure wherever it sits in the output.
func (d *Digest) Evidence(failed bool, n int) []string {
	failed = failed || d.Failed
	var out []string
	seen := map[string]bool{}
	keep := func(line string) {
		if len(out) < n && line != "" && !seen[line] {
			seen[line] = true
			out = append(out, line)
		}
	}
	for _, f := range d.Findings {
		if f.Severity == Error || f.Severity == Plain && failed {
			for _, line := range f.Lines {
				keep(line)
			}
		}
	}
	if len(out) == 0 && failed {
		for _, line := range d.Fallback {
			keep(line)
		}
	}
	return out
}

// Identify reads an output that failed and renders what identifies its
// failure (Lines).
func Identify(output string, l Limits) []string {
	d := Read(output)
	d.Failed = true
	return d.Lines(l)
}

func repeats(f Finding) string {
	if len(f.Also) == 0 {
		return fmt.Sprintf(" (×%d)", f.Count)
	}
	also := f.Also
	more := ""
	if len(also) > 3 {
		more = fmt.Sprintf(" and %d more", len(also)-3)
		also = also[:3]
	}
	return fmt.Sprintf(" (×%d, also at %s%s)", f.Count, strings.Join(also, ", "), more)
}

// moreLine counts findings left out, naming them by kind.
func moreLine(rest []Finding) string {
	n := 0
	for _, f := range rest {
		n += f.Count
	}
	byKind := map[Kind]int{}
	var kinds []Kind
	for _, f := range rest {
		if byKind[f.Kind] == 0 {
			kinds = append(kinds, f.Kind)
		}
		byKind[f.Kind] += f.Count
	}
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s", byKind[k], plural(k.String(), byKind[k])))
	}
	return fmt.Sprintf("… and %d more (%s)", n, strings.Join(parts, ", "))
}

func plural(s string, n int) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// Elide cuts a line to n runes by leaving out its middle, marked "…": an
// error line names its operation at the start and its cause at the end. The
// cut falls on spaces where it can.
func Elide(line string, n int) string {
	runes := []rune(line)
	if len(runes) <= n || n < 8 {
		return shorten(line, n)
	}
	keep := n - 3 // " … "
	head, tail := keep*3/5, keep-keep*3/5
	h := string(runes[:head])
	if i := strings.LastIndexByte(h, ' '); i > len(h)*3/4 {
		h = h[:i]
	}
	t := string(runes[len(runes)-tail:])
	if i := strings.IndexByte(t, ' '); i >= 0 && i < len(t)/4 {
		t = t[i+1:]
	}
	return strings.TrimRight(h, " ") + " … " + strings.TrimLeft(t, " ")
}

// shorten cuts s to n runes, marking the cut.
func shorten(s string, n int) string {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n {
			break
		}
		count++
	}
	return s[:i] + "…"
}
