package diagnose

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Read bounds: an output of a million lines must not cost a million scans;
// failures are reported at either end. A line is read up to scanLineBytes:
// no diagnostic is longer, and the patterns over a line of 20 MB (a blob
// pasted without a newline) took 0.7 s that no deadline could stop.
const (
	scanHead      = 3000
	scanTail      = 1500
	scanLineBytes = 64 << 10
)

// Plain is the severity of a diagnostic whose line names none (Go's
// compiler and vet, ESLint's unix format): an error when the command failed,
// nothing otherwise (a grep hit, an optimisation note).
const Plain Severity = 0

// Read reads an output's structure and says what it reports as wrong.
func Read(output string) Digest {
	r := &reader{lines: prepare(output)}
	r.trimmed = make([]string, len(r.lines))
	for i, l := range r.lines {
		r.trimmed[i] = strings.TrimSpace(l)
	}
	r.run()
	return r.digest()
}

// prepare splits an output into lines without terminal colours or carriage
// returns, keeping its head and tail when it is long.
func prepare(output string) []string {
	if strings.IndexByte(output, 0x1b) >= 0 {
		output = ansi.ReplaceAllString(output, "")
	}
	lines := strings.Split(output, "\n")
	for i, l := range lines {
		if len(l) > scanLineBytes {
			cut := scanLineBytes
			for cut > 0 && !utf8.RuneStart(l[cut]) {
				cut--
			}
			l = l[:cut]
			lines[i] = l
		}
		if strings.IndexByte(l, '\r') >= 0 {
			// A progress line rewritten in place: what was printed last.
			l = strings.TrimRight(l, "\r")
			if k := strings.LastIndexByte(l, '\r'); k >= 0 {
				l = l[k+1:]
			}
			lines[i] = l
		}
	}
	if len(lines) > scanHead+scanTail {
		lines = append(lines[:scanHead:scanHead], lines[len(lines)-scanTail:]...)
	}
	return lines
}

var ansi = later(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

type reader struct {
	lines []string
	// trimmed holds lines without surrounding white space, made once.
	trimmed  []string
	findings []Finding
	// named holds findings by test name, for a runner's closing list to
	// complete (pytest's "FAILED path::test - message").
	named map[string]int
	// progress holds pytest -v's verdict lines by test name.
	progress map[string]string
	envelope []string
	// failed: the output says in its own words that its command failed.
	failed   bool
	fallback [4][]string
	last     string
	// goTest is the Go test whose output the lines belong to (-v), and
	// goTestLog what it logged.
	goTest    string
	goTestLog map[string][]string
	// done is set when the rest of the output only repeats what was read
	// (a runner's closing list of the failures it already printed).
	done bool
}

func (r *reader) run() {
	for i := 0; i < len(r.lines) && !r.done; {
		if t := strings.TrimSpace(r.lines[i]); t != "" {
			r.last = t
		}
		before := len(r.findings)
		if n := r.block(i); n > 0 {
			r.ended(before, i+n)
			for _, l := range r.lines[i : i+n] {
				if t := strings.TrimSpace(l); t != "" {
					r.last = t
				}
			}
			i += n
			continue
		}
		r.line(i)
		r.ended(before, i+1)
		i++
	}
	if r.done {
		for i := len(r.lines) - 1; i >= 0; i-- {
			if t := strings.TrimSpace(r.lines[i]); t != "" {
				r.last = t
				break
			}
		}
	}
}

// ended notes where the findings from index from on ended in the output.
func (r *reader) ended(from, end int) {
	for k := from; k < len(r.findings); k++ {
		r.findings[k].end = end
	}
}

// trailing counts the non-empty lines after end that are not envelopes:
// output the program went on to print.
func (r *reader) trailing(end int) int {
	n := 0
	for _, l := range r.lines[min(end, len(r.lines)):] {
		if t := strings.TrimSpace(l); t != "" {
			if env, _ := envelope(t); !env {
				n++
			}
		}
	}
	return n
}

func (r *reader) digest() Digest {
	d := Digest{Envelope: r.envelope, Failed: r.failed, Last: r.last}
	for score := 3; score > 0; score-- {
		d.Fallback = append(d.Fallback, r.fallback[score]...)
	}
	for _, f := range r.findings {
		// An error in so many words (a failing test, a race, an error
		// status, a diagnostic that says "error") fails the run, whatever
		// the exit code: curl -i of a 404, a psql script without
		// ON_ERROR_STOP. An exception does when the output ends with it; one
		// the program logged and went on from is trouble.
		if f.Severity == Error && !f.logged && (f.Kind != Exception || r.trailing(f.end) <= 2) {
			d.Failed = true
		}
	}
	d.Findings = group(r.findings)
	return d
}

// add records a finding; name, when set, lets a later line complete it.
func (r *reader) add(f Finding, name string) {
	if len(f.Lines) == 0 {
		return
	}
	f.Count = 1
	if f.key == "" {
		f.key = strings.Join(f.Lines, "\n")
	}
	r.findings = append(r.findings, f)
	if name != "" {
		if r.named == nil {
			r.named = map[string]int{}
		}
		r.named[name] = len(r.findings) - 1
	}
}

// group merges findings that report the same thing: identical ones, and
// those that differ only in their location (the same unused variable in
// twenty files), whose locations are listed.
func group(fs []Finding) []Finding {
	var out []Finding
	at := map[string]int{}
	for _, f := range fs {
		key := f.key
		if f.Kind == Status {
			// "spurious network error (3 tries remaining)", then 2, then 1:
			// one error, retried.
			key = digits.ReplaceAllString(key, "#")
		}
		k := f.Kind.String() + "\x00" + key
		if f.Kind == Diagnostic && location(f.Lines[0]) == "" {
			// Its location is on another line (rustc's "--> src/x.rs:3:9"),
			// and its headline alone ("mismatched types") says too little
			// to call two of them the same.
			k += "\x00" + findingLocation(f)
		}
		if i, ok := at[k]; ok {
			g := &out[i]
			g.Count++
			if loc := findingLocation(f); loc != "" && loc != findingLocation(*g) {
				g.Also = append(g.Also, loc)
			}
			if f.Severity > g.Severity {
				g.Severity = f.Severity
			}
			continue
		}
		at[k] = len(out)
		out = append(out, f)
	}
	return out
}

func (r *reader) trim(i int) string { return r.trimmed[i] }

// block reads a structure that spans lines at i and returns how many lines
// it took, 0 when none starts there.
func (r *reader) block(i int) int {
	for _, read := range []func(int) int{
		r.pythonTraceback, r.pythonSyntaxError, r.goPanic, r.goRace, r.goTestFailure, r.rustPanic, r.rustDiagnostic,
		r.sanitizer, r.valgrind, r.javacDiagnostic, r.stackTrace, r.pytestSection, r.jestFailure, r.vitestFailure,
		r.tapFailure, r.specFailure, r.markedFailure, r.phpunitFailure, r.grpcurlError, r.terraformError, r.sqlError, r.eslintFile, r.httpResponse, r.diffHeader, r.goImports, r.npmBlock, r.rustfmtDiff, r.sqliteError, r.junitConsoleFailure, r.gradleFailure, r.phpUncaught, r.consoleException,
	} {
		if n := read(i); n > 0 {
			return n
		}
	}
	return 0
}

// line reads one line on its own.
func (r *reader) line(i int) {
	raw := r.lines[i]
	t := strings.TrimSpace(raw)
	if t == "" {
		return
	}
	if r.goTestLine(raw, t) {
		return
	}
	if r.pytestSummary(t) {
		return
	}
	if unittestHeader.MatchString(t) || cargoTestFailed.MatchString(t) {
		r.add(Finding{Kind: Test, Severity: Error, Lines: []string{t}}, "")
		return
	}
	if env, failed := envelope(t); env {
		r.envelope = append(r.envelope, t)
		r.failed = r.failed || failed
		return
	}
	sev := Plain
	rest := t
	if m := mavenPrefix.FindStringSubmatch(t); m != nil {
		// Maven prefixes every line with its level: read what follows.
		rest = m[2]
		sev = Warning
		if m[1] == "ERROR" {
			sev = Error
		}
		if env, failed := envelope(rest); env || mavenNoise(rest) {
			r.envelope = append(r.envelope, t)
			r.failed = r.failed || failed || env
			return
		}
		if m := mavenTest.FindStringSubmatch(rest); m != nil {
			r.add(Finding{Kind: Test, Severity: Error, Lines: []string{t}}, "")
			return
		}
		if _, ok := diagnostic(t, rest, sev); !ok {
			// Maven's own message at its level ("[ERROR] Plugin … could not
			// be resolved"): what went wrong, said once.
			r.add(Finding{Kind: Status, Severity: sev, Lines: []string{t}, key: t}, "")
			return
		}
	}
	if f, ok := diagnostic(t, rest, sev); ok {
		r.add(f, "")
		return
	}
	if (jsonErrorKey.MatchString(t) || followUp.MatchString(t)) && r.attach(t) {
		return
	}
	if gitState.MatchString(t) {
		r.add(Finding{Kind: Status, Severity: Warning, Lines: []string{t}}, "")
		return
	}
	if !mayReport(rest) {
		return // no word of trouble: nothing the expressions below could find
	}
	if networkFailure(rest) && (!CodeLike(rest) || timestamped(rest) || strings.Contains(rest, "rpc error: code = ")) && !objectField.MatchString(rest) {
		// A client that could not reach its server says so in its own
		// line, whatever printed it (a Go program's log, curl, a test):
		// the line names the address and the cause, though its fields
		// (code = Unavailable) look like code.
		r.add(Finding{Kind: Status, Severity: Error, Lines: []string{t}, key: t, logged: logLevel(rest) != Plain}, "")
		return
	}
	if l := logLevel(rest); l != Plain && (!CodeLike(rest) || timestamped(rest)) {
		// A program's log record: trouble it reports, not a failure of the
		// command that printed it (the program went on).
		r.add(Finding{Kind: Status, Severity: l, Lines: []string{t}, key: t, logged: true}, "")
		return
	}
	if f, ok := statusLine(t, rest); ok {
		r.add(f, "")
		return
	}
	if exceptionLine(rest) && strings.Contains(rest, ": ") {
		r.add(Finding{Kind: Exception, Severity: Error, Lines: []string{t}, key: t}, "")
		return
	}
	s := errorScore(t)
	if m := toolLine.FindStringSubmatch(t); m != nil && !notTools[m[1]] && s == 0 && !CodeLike(m[2]) {
		s = 1 // "gzip: stdin: not in gzip format": a program saying what it could not do
	}
	if s == 3 || s > 0 && !CodeLike(t) {
		r.fallback[s] = append(r.fallback[s], t)
	}
}

// attach adds a detail line (an error body's message, a field it names) to
// the status finding just read, while it has room.
func (r *reader) attach(line string) bool {
	if len(r.findings) == 0 {
		return false
	}
	f := &r.findings[len(r.findings)-1]
	if f.Kind != Status && f.Kind != Diagnostic {
		return false
	}
	// An error body's keys share one line: the message and every field.
	if last := f.Lines[len(f.Lines)-1]; len(f.Lines) > 1 && jsonErrorKey.MatchString(last) && jsonErrorKey.MatchString(line) {
		f.Lines[len(f.Lines)-1] = last + " " + line
		return true
	}
	if len(f.Lines) >= DefaultLimits.LinesPerFinding {
		return false
	}
	f.Lines = append(f.Lines, line)
	return true
}

func (r *reader) firstLine() int {
	for i, l := range r.lines {
		if strings.TrimSpace(l) != "" {
			return i
		}
	}
	return -1
}

// envelopes: lines that only say that a run failed, or how it ended.
var (
	exitStatus   = later(`^(?i:\[?(?:exit status|exit code|exited with code|process exited with code|process completed with exit code|command exited with code|return code|returncode)[:=]?\s*(-?\d+)\]?)\.?$`)
	envelopeRes  = later(`^(?:FAIL|FAILED|FAILURES!+|ERRORS!+|BUILD FAILED|BUILD FAILURE|\[build failed\]|Tests failed\.?|FAIL\s+\S+\s+(?:\[(?:build failed|setup failed|no test files)\]|[\d.]+s)|FAILED \((?:failures|errors)=\d+(?:, (?:failures|errors|skipped)=\d+)*\)|make(?:\[\d+\])?: \*\*\* (?:\[[^\]]*\] )?Error \d+|error: could not compile .*|error: aborting due to .*|error: test failed, to rerun pass .*|Some tests failed\.?|npm (?:ERR!|error) (?:code 1|errno \d+|A complete log of this run.*|Lifecycle script .* failed.*|command failed|command sh -c .*|path .*|Test failed\.\s.*)|Error: Process completed with exit code \d+\.?|Tests run: \d+,\s+Failures: \d+.*|Test Suites: \d+ failed.*|Tests:\s+\d+ failed.*|Test Files\s+\d+ failed.*|Tests\s+\d+ failed.*|[#ℹ] fail [1-9]\d*|# fail [1-9]\d*|=+ .*\b\d+ (?:failed|errors?)\b.* =+|\d+ failed(?:, \d+ \w+)* in [\d.]+s|test result: FAILED\..*|ERROR SUMMARY: [1-9]\d* errors? .*|==\d+== ERROR SUMMARY: [1-9]\d* errors? .*|Found \d+ errors? in \d+ files?.*|Found \d+ errors?\..*|✖ \d+ problems? .*|\d+ errors? generated\.|\d+ errors?|\d+ errors? and \d+ warnings?.*|compilation terminated\.|collect2: error: ld returned \d+ exit status|Error: Command failed.*|\S+:\d+:\d+: too many errors|clang(?:-\d+)?: error: linker command failed with exit code \d+.*|npm (?:ERR!|error) code \w+|tar: Child returned status \d+|tar: Error is not recoverable: exiting now|tar: Exiting with failure status due to previous errors)$`)
	exitNonZero  = later(`[1-9]`)
	mavenPrefix  = later(`^\[(ERROR|WARNING)\]\s+(.+)$`)
	mavenTest    = later(`^\s*[\w$.]+\.\w+(?::\d+)?(?: [»>] \w+)?\s+.+$`)
	mavenNoiseRe = later(`^(?:-> \[Help \d+\]|Re-run Maven .*|For more information about the errors.*|To see the full stack trace.*|Failed to execute goal .*|COMPILATION ERROR :?|Failures:|Errors:|Please refer to .*|See dump files? .*|\[Help \d+\] .*|There are test failures\..*|Crashed tests:|BUILD FAILURE|\s*|After correcting the problems.*|mvn <args> -rf .*)$`)
)

// envelope reports whether a line only says how a run ended, and whether it
// says that the run failed.
func envelope(t string) (isEnvelope, failed bool) {
	if !mayBeEnvelope(t) {
		return false, false
	}
	if m := exitStatus.FindStringSubmatch(t); m != nil {
		if n, _ := strconv.Atoi(m[1]); n > 128 && n < 160 {
			// 137, 139, 143: killed by a signal (the OOM killer, a
			// segfault): that says why, it is no envelope.
			return false, false
		}
		return true, exitNonZero.MatchString(m[1])
	}
	if envelopeRes.MatchString(t) {
		// ESLint's count fails the run only when it counts errors.
		return true, !strings.Contains(t, "(0 errors,")
	}
	return false, false
}

func mavenNoise(rest string) bool { return mavenNoiseRe.MatchString(rest) }

// Source locations.
var (
	// path:line[:col]: message; path:line:col - message (tsc --pretty, pyright).
	locPrefix = later(`^((?:[A-Za-z]:)?(?:[\w@+~.\-]*[/\\])*[\w@+~.\-]*\w\.\w{1,12}|Makefile|Dockerfile|GNUmakefile|makefile|<stdin>|<string>)((?::\d+){1,2}|:\[\d+,\d+\]|\(\d+,\d+\))(?::\s*|\s+-\s+|\s+)(\S.*)$`)
	// A location anywhere in a line: to name where a finding was reported.
	anyLoc   = later(`(?:[\w@+~.\-]*[/\\])*[\w@+~.\-]*\w\.\w{1,12}(?::\d+){1,2}|(?:[\w@+~.\-]*[/\\])*[\w@+~.\-]*\w\.\w{1,12}\(\d+,\d+\)|(?:[\w@+~.\-]*[/\\])*[\w@+~.\-]*\w\.\w{1,12} line \d+`)
	severity = later(`^(?i:(fatal error|error|err|warning|warn|note|info|information|hint|help|remark|suggestion))(?:\[[\w-]+\])?(?:\s+[A-Z]{2,5}\d{3,5})?\s*:(?:\s+|$)`)
	// Go's package header ("# example.com/x/y"), gcc's context lines ("x.c:
	// In function 'main':", "In file included from x.h:3,").
	contextLine = later(`^(?:# \S+|In file included from .*|\s*from .*[:,]|.*: In (?:function|member function|constructor|destructor|instantiation of|lambda function) .*:|.*: At (?:top level|global scope):|.*: In (?:static )?member function .*)$`)
)

// unittestHeader opens a failure of Python's unittest: "FAIL: test_add
// (test_calc.CalcTest.test_add)"; its traceback follows.
// gitState lines say a repository is in a state that later work must
// mind (a merge half done, a detached HEAD).
var gitState = later(`^(?:You have unmerged paths\.|both (?:modified|added|deleted):\s+\S.*|You are in 'detached HEAD' state\..*|Unmerged paths:|interactive rebase in progress.*|You are currently (?:rebasing|bisecting|cherry-picking|reverting).*)$`)

// followUp lines add to the error before them: cargo's "required by
// package …", "Caused by:" explanations.
var followUp = later(`^(?:required by package .+|location searched: .+|perhaps you meant: .+|Caused by: .+|caused by: .+)$`)

// pytestProgress is pytest -v's line for a test that failed:
// "tests/test_x.py::test_y FAILED   [100%]".
var pytestProgress = later(`^(\S+::\S+) (?:FAILED|ERROR)\s+\[\s*\d+%\]$`)

var (
	unittestHeader  = later(`^(?:FAIL|ERROR): \S+ \(.+\)$`)
	cargoTestFailed = later(`^test \S+ \.\.\. FAILED$`)
)

var toolPrefix = later(`^(?:[a-z][\w.-]{0,15}|/usr/bin/\w+): `)

var digits = later(`\d+`)

// findingLocation is the first location any of a finding's lines names.
func findingLocation(f Finding) string {
	for _, l := range f.Lines {
		if loc := location(l); loc != "" {
			return loc
		}
	}
	return ""
}

// location returns the first source location a line names, "" for none.
func location(line string) string {
	if m := locPrefix.FindStringSubmatch(line); m != nil {
		return m[1] + m[2]
	}
	return anyLoc.FindString(line)
}

// diagnostic reads a line that starts with a source location. t is the
// whole line, rest the line without a tool's prefix, sev the prefix's
// severity (Plain when none).
func diagnostic(t, rest string, sev Severity) (Finding, bool) {
	if !hasLocation(rest) {
		return Finding{}, false // locPrefix cannot match it, nor any part of it
	}
	if mayBeContext(rest) && contextLine.MatchString(rest) {
		return Finding{}, false
	}
	m := locPrefix.FindStringSubmatch(rest)
	if m == nil {
		// A tool naming itself first: "vet: x.go:3:2: …", "/usr/bin/ld: x.o: …".
		if p := toolPrefix.FindString(rest); p != "" {
			m = locPrefix.FindStringSubmatch(rest[len(p):])
		}
		if m == nil {
			return Finding{}, false
		}
	}
	msg := m[3]
	if s := severity.FindStringSubmatch(msg); s != nil {
		switch strings.ToLower(s[1]) {
		case "fatal error", "error", "err":
			sev = Error
		case "warning", "warn":
			sev = max(sev, Warning)
		default: // a note, hint or help line adds to what it follows
			return Finding{}, false
		}
	} else if w := strings.SplitN(msg, ":", 2)[0]; sev == Plain && strings.HasSuffix(w, "Warning") && !strings.Contains(w, " ") {
		sev = Warning // "x.py:34: DeprecationWarning: …"
	} else if sev == Plain && strings.HasSuffix(w, "Error") && !strings.Contains(w, " ") {
		sev = Error
	} else if l := logLevel(msg); sev == Plain && l != Plain {
		sev = l // a log line a grep found: "svc.log:1002:… WARN [worker-01] …"
	} else if sev == Plain {
		// "path:12: msg [Error/no-undef]", "x.py:3:1: E302 expected…": a
		// code or an ESLint severity in brackets says it.
		switch {
		case strings.Contains(msg, "[Error/"):
			sev = Error
		case strings.Contains(msg, "[Warning/"):
			sev = Warning
		}
	}
	// A column says a compiler wrote it (grep never prints one): its
	// message may quote code. Without one, a source line is a grep hit.
	if sev == Plain && !(strings.Count(m[2], ":") >= 2 && len(strings.Fields(msg)) >= 2) && !plainDiagnostic(msg) {
		return Finding{}, false
	}
	return Finding{Kind: Diagnostic, Severity: sev, Lines: []string{t}, key: msg}, true
}

// plainDiagnostic reports whether a message after a location reads as one
// (Go's `"os" imported and not used`) rather than a grep hit's source line
// or a compiler's note (`can inline f`).
func plainDiagnostic(msg string) bool {
	if CodeLike(msg) || strings.HasPrefix(msg, "in ") || strings.HasPrefix(msg, "can inline") || strings.HasPrefix(msg, "inlining call") ||
		strings.Contains(msg, "escapes to heap") || strings.Contains(msg, "does not escape") ||
		strings.HasPrefix(msg, "moved to heap") || strings.HasPrefix(msg, "leaking param") {
		return false
	}
	return len(strings.Fields(msg)) >= 2
}

// CodeLike reports whether a text reads as source code rather than a
// statement about it.
func CodeLike(s string) bool {
	t := strings.TrimSpace(s)
	if t == "" {
		return false
	}
	if i := strings.Index(t, "//"); i >= 0 && (i == 0 || t[i-1] == ' ' || t[i-1] == '\t') {
		return true // a comment, not a URL's "://"
	}
	for _, marker := range []string{"{", "}", ":=", " != ", " == ", " = ", "=>", "();", "/*", "#include", "import ", "return ", "func ", "def ", "raise ", "throw ", "} catch", "except ", "else:", "const ", "let ", "var "} {
		if strings.Contains(t, marker) {
			return true
		}
	}
	if strings.HasSuffix(t, ";") || strings.HasSuffix(t, "{") || strings.HasSuffix(t, ",") || strings.HasSuffix(t, "(") {
		return true
	}
	// A call statement: t.Errorf("reserve %s: %v", sku, err)
	if open := strings.IndexByte(t, '('); open > 0 && strings.HasSuffix(t, ")") {
		callee := t[:open]
		return !strings.ContainsAny(callee, " \t:") && strings.Contains(callee, ".")
	}
	return false
}

// logLine finds a log record's level: an upper-case level word standing
// alone after a timestamp or a bracket ("2025-04-29T14:00:40Z WARN [w-1]
// …", "[ERROR] …"), or a key=value level ("level=error").
var logLine = later(`(?:^|\d[Z\d]?\s+|\[)(ERROR|ERR|WARN|WARNING|FATAL|CRITICAL|PANIC)(?:\]\s+|\s+)\S|\blevel=(error|warn|warning|fatal|panic|crit)\b|\s[-|]\s(ERROR|WARNING|CRITICAL|FATAL)\s[-|]\s`)

// networkFailure reports whether a line says a connection could not be
// made or was lost: refused, reset, timed out, no such host, a TLS
// handshake, gRPC's Unavailable and DeadlineExceeded, an errno name.
func networkFailure(s string) bool {
	if !containsAny(s, "refused", "reset by peer", "no such host", "i/o timeout", "ECONN", "EHOSTUNREACH", "ENOTFOUND", "ETIMEDOUT",
		"code = Unavailable", "code = DeadlineExceeded", "handshake", "network is unreachable", "broken pipe") {
		return false
	}
	return networkFailureLine.MatchString(s)
}

// objectField is a field of an error object a runtime prints after its
// message (Node's "  code: 'ECONNREFUSED',"): the message says it already.
var objectField = later(`^\w+: ['"][^'"]*['"],?$`)

var networkFailureLine = later(`(?:dial (?:tcp|udp|unix)\S*|connect|connecting to \S+|lookup \S+(?: on \S+)?|read tcp \S+|write tcp \S+)[:.]? (?:connection refused|connection reset by peer|no such host|i/o timeout|network is unreachable|broken pipe)|\b(?:ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENOTFOUND|ETIMEDOUT)\b|rpc error: code = (?:Unavailable|DeadlineExceeded)\b|(?:TLS|tls|SSL) handshake (?:timeout|failed|error)|Connection refused`)

// timestamped reports whether a line opens with a date and time, as a log
// record does ("2026-02-21T08:43:58.289Z", "2026/02/21 08:43:58"): its
// fields (err="…", code = Unavailable) make it look like code, but a
// program printed it.
func timestamped(s string) bool {
	if len(s) < 16 {
		return false
	}
	for i, c := range []byte(s[:16]) {
		switch i {
		case 4, 7:
			if c != '-' && c != '/' {
				return false
			}
		case 10:
			if c != 'T' && c != ' ' {
				return false
			}
		case 13:
			if c != ':' {
				return false
			}
		default:
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	return true
}

// logLevel is the severity of a log record's line, Plain for none.
func logLevel(s string) Severity {
	if !containsAny(s, "ERR", "WARN", "FATAL", "CRITICAL", "PANIC", "level=") {
		return Plain // no level word logLine could find
	}
	m := logLine.FindStringSubmatch(s)
	if m == nil {
		return Plain
	}
	switch strings.ToUpper(m[1] + m[2] + m[3]) {
	case "WARN", "WARNING":
		return Warning
	}
	return Error
}

// The checks below are cheap necessary conditions of the expressions they
// guard, looked at first: most lines of an output match none of them, and
// a regular expression that fails still walks the line (diagnose.Read was
// 2.2 MB/s over the recorded outputs, most of it spent failing).

// hasLocation reports whether s holds what locPrefix needs after a path: a
// colon before a digit or a bracket, or a parenthesis before a digit.
func hasLocation(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		switch s[i] {
		case ':':
			if c := s[i+1]; c >= '0' && c <= '9' || c == '[' {
				return true
			}
		case '(':
			if c := s[i+1]; c >= '0' && c <= '9' {
				return true
			}
		}
	}
	return false
}

// hasDigits reports whether s holds n ASCII digits in a row.
func hasDigits(s string, n int) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			if run++; run >= n {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// containsAny reports whether s contains one of subs.
func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// containsFold reports whether s contains sub, an ASCII lower-case word,
// in any case.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for j < len(sub) && s[i+j]|0x20 == sub[j] {
			j++
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}

// mayBeContext reports whether s starts or holds what every alternative of
// contextLine does.
func mayBeContext(s string) bool {
	return strings.HasPrefix(s, "# ") || strings.HasPrefix(s, "In file included from ") ||
		strings.HasPrefix(strings.TrimLeft(s, "\t\n\f\r "), "from ") || strings.Contains(s, ": In ") || strings.Contains(s, ": At ")
}

// mayBeEnvelope reports whether t holds a word every alternative of
// exitStatus (exit, return, in any case) or envelopeRes has.
func mayBeEnvelope(t string) bool {
	return containsFold(t, "exit") || containsFold(t, "return") ||
		containsAny(t, "FAIL", "ERR", "fail", "Failures", "Error", "error", "problem", "compilation terminated", "tar: ")
}

// isASCII reports whether s is all ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
