package diagnose

import (
	"strings"
)

// Each block reader looks at line i, and when a structure it knows starts
// there, records its findings and returns how many lines it took. Most walk
// the lines below the start with scan, saying of each whether it is the
// block's and keeping what they need of it.

// lineRole is what a block reader says of a line below the block's start.
type lineRole uint8

const (
	inBlock   lineRole = iota // the line is the block's: read on
	endBefore                 // the block ended above the line
	endWith                   // the line is the block's last
)

// scan walks the lines from index from, asking role of each (its index, the
// line, the line trimmed) until one ends the block or the output ends, and
// returns the index of the first line after the block.
func (r *reader) scan(from int, role func(j int, l, t string) lineRole) int {
	for j := from; j < len(r.lines); j++ {
		switch role(j, r.lines[j], r.trimmed[j]) {
		case endBefore:
			return j
		case endWith:
			return j + 1
		}
	}
	return max(from, len(r.lines))
}

// pythonTraceback: "Traceback (most recent call last):", frames (outermost
// first), then the exception line. Kept: the exception and the innermost
// frame in the project's code.
func (r *reader) pythonTraceback(i int) int {
	if r.trim(i) != "Traceback (most recent call last):" {
		return 0
	}
	frame, first, source, repeated := "", "", "", ""
	j := r.scan(i+1, func(j int, l, t string) lineRole {
		switch {
		case strings.HasPrefix(t, "[Previous line repeated "):
			repeated = t
		case strings.HasPrefix(t, `File "`):
			if first == "" {
				first = t
			}
			if projectPath(pyFramePath(t)) {
				frame, source = t, ""
				// The frame's source line, unless the frame has none.
				if j+1 < len(r.lines) && indent(r.lines[j+1]) > indent(l) && !strings.HasPrefix(r.trim(j+1), `File "`) && strings.Trim(r.trim(j+1), "^~ ") != "" {
					source = r.trim(j + 1)
				}
			}
		case t == "" || startsWithSpace(l):
			// a frame's source line, carets, "[Previous line repeated …]"
		default:
			return endBefore // the exception
		}
		return inBlock
	})
	if frame == "" {
		frame = first
	}
	if j >= len(r.lines) {
		return j - i
	}
	exc := r.trim(j)
	lines := present(exc, frame, source, repeated)
	r.add(Finding{Kind: Exception, Severity: Error, Lines: lines, key: exc}, "")
	return j + 1 - i
}

func pyFramePath(frame string) string {
	rest := strings.TrimPrefix(frame, `File "`)
	p, _, _ := strings.Cut(rest, `"`)
	return p
}

// projectPath reports whether a frame's file is the project's own code
// rather than a standard library's, an installed package's or a runtime's.
func projectPath(p string) bool {
	if p == "" {
		return false
	}
	for _, lib := range libraryMarkers {
		if strings.Contains(p, lib) {
			return false
		}
	}
	return true
}

var libraryMarkers = []string{
	"/lib/python", "site-packages", "dist-packages", "<frozen ", "/usr/lib/", "/usr/share/", "/usr/include/",
	"node_modules", "node:", "internal/process", "internal/modules", "internal/main", "<anonymous>", "/rustc/", "/.cargo/registry",
	"/.rustup/", "library/std/", "library/core/", "library/alloc/", "/pkg/mod/", "/vendor/", "/go/src/runtime/", "/src/runtime/",
	"/src/testing/", "/src/reflect/", "/src/sync/", "java.base/", "/libexec/", "sanitizer_common", "/build/glibc",
	"libsanitizer", "/sysdeps/", "../csu/", " in __interceptor_", " in __asan", "_start (",
}

// Go panics: "panic: msg" or "fatal error: msg" at the start of a line, then
// goroutine traces (function line, then "\t/path/file.go:12 +0x1d").
var (
	goPanicStart = later(`^(?:panic: |fatal error: )`)
	goroutineHdr = later(`^goroutine \d+ \[[^\]]+\]:$`)
	goFrameFile  = later(`^\s+\S+\.(?:go|s):\d+(?: \+0x[0-9a-f]+)?$`)
)

func (r *reader) goPanic(i int) int {
	if !strings.HasPrefix(r.lines[i], "panic: ") && !strings.HasPrefix(r.lines[i], "fatal error: ") {
		return 0 // a cheap look before the expressions
	}
	if !goPanicStart.MatchString(r.lines[i]) {
		return 0
	}
	headline := r.trim(i)
	// A deadlock is every goroutine's fault: the innermost project frame of
	// each (two at most); a panic is the panicking goroutine's, listed first.
	perGoroutine := strings.Contains(headline, "deadlock") || strings.Contains(headline, "timed out")
	withFrame := 0
	lines := []string{headline}
	fn, found, goroutines := "", false, 0
	running := false
	j := r.scan(i+1, func(j int, l, t string) lineRole {
		switch {
		case t == "running tests:":
			running = true // "panic: test timed out": which tests ran
		case running && strings.HasPrefix(l, "\t\t"):
			if len(lines) < 3 {
				lines = append(lines, t)
			}
		case t == "", strings.HasPrefix(l, "\tpanic: "), strings.HasPrefix(t, "[signal "), strings.HasPrefix(t, "...additional frames elided..."):
		case goroutineHdr.MatchString(t):
			running = false
			goroutines++
			found = false
		case goFrameFile.MatchString(l):
			if !found && goProjectFunc(fn) && projectPath(t) && !strings.Contains(t, "_testmain.go") &&
				(goroutines <= 1 || perGoroutine && withFrame < 2) {
				lines = append(lines, fn+" "+t)
				found = true
				withFrame++
			}
		case strings.HasPrefix(t, "created by "):
			fn = ""
		case !startsWithSpace(l) && j+1 < len(r.lines) && goFrameFile.MatchString(r.lines[j+1]):
			fn = t
		default:
			return endBefore
		}
		return inBlock
	})
	if goroutines == 0 && len(lines) == 1 && !strings.HasPrefix(headline, "fatal error: ") {
		// "panic: " at a line's start without a trace: still a panic line.
		r.add(Finding{Kind: Exception, Severity: Error, Lines: lines, key: headline}, "")
		return 1
	}
	r.add(Finding{Kind: Exception, Severity: Error, Lines: lines, key: headline}, "")
	return j - i
}

// goProjectFunc reports whether a Go frame's function is the project's: its
// import path's first element has a dot (a module path) or it is package
// main; the standard library's and the runtime's have none.
func goProjectFunc(fn string) bool {
	if fn == "" {
		return false
	}
	name := fn
	if k := strings.LastIndexByte(name, '/'); k >= 0 {
		first, _, _ := strings.Cut(name, "/")
		return strings.Contains(first, ".")
	}
	pkg, _, _ := strings.Cut(name, ".")
	return pkg == "main"
}

// goRace: "WARNING: DATA RACE", the racing accesses with their frames, up to
// "==================". Kept: the warning and each of the first two
// accesses' innermost project frame.
var goRaceAccess = later(`^(?:Previous )?(?:[Rr]ead|[Ww]rite|[Aa]tomic \w+)(?: of size \d+)? at 0x[0-9a-f]+ by (?:goroutine \d+|main goroutine):$`)

func (r *reader) goRace(i int) int {
	if r.trim(i) != "WARNING: DATA RACE" {
		return 0
	}
	lines := []string{"WARNING: DATA RACE"}
	key := ""
	accesses, frames := 0, 0
	fn := ""
	j := r.scan(i+1, func(_ int, l, t string) lineRole {
		switch {
		case strings.HasPrefix(t, "=================="):
			return endWith
		case goRaceAccess.MatchString(t):
			accesses++
			frames = 0
			fn = ""
		case strings.HasPrefix(t, "Goroutine ") && strings.HasSuffix(t, ":"):
			accesses = 3 // where goroutines were created: not the race
		case goFrameFile.MatchString(l):
			// Each of the two accesses by its innermost project frame and
			// that frame's caller.
			if accesses <= 2 && frames < 2 && goProjectFunc(fn) && projectPath(t) {
				lines = append(lines, fn+" "+t)
				key += fn + "\n"
				frames++
			}
		case t != "":
			fn = t
		}
		return inBlock
	})
	r.add(Finding{Kind: Race, Severity: Error, Lines: lines, key: key}, "")
	return j - i
}

// Go tests: "--- FAIL: TestX (0.00s)", with what the test logged indented
// below it, or above it between "=== RUN   TestX" and the verdict (-v).
var (
	goTestFail = later(`^(\s*)--- FAIL: (\S+) \([\d.]+m?s\)$`)
	goTestRun  = later(`^=== (?:RUN|CONT|PAUSE|NAME)\s+(\S+)$`)
	goTestLog  = later(`^\s+\S+\.go:\d+: \S`)
)

// goTestLine reads a line of a Go test run that belongs to a test's log.
func (r *reader) goTestLine(raw, t string) bool {
	if m := goTestRun.FindStringSubmatch(t); m != nil {
		r.goTest = m[1]
		return true
	}
	if strings.HasPrefix(t, "--- PASS: ") || strings.HasPrefix(t, "--- SKIP: ") {
		r.goTest = ""
		return true
	}
	if r.goTest != "" && goTestLog.MatchString(raw) {
		if r.goTestLog == nil {
			r.goTestLog = map[string][]string{}
		}
		r.goTestLog[r.goTest] = append(r.goTestLog[r.goTest], t)
		return true
	}
	return false
}

func (r *reader) goTestFailure(i int) int {
	if !strings.Contains(r.lines[i], "--- FAIL: ") {
		return 0 // a cheap look before the expressions
	}
	m := goTestFail.FindStringSubmatch(r.lines[i])
	if m == nil {
		return 0
	}
	depth := indent(r.lines[i])
	name := m[2]
	var logged []string
	j := r.scan(i+1, func(_ int, l, t string) lineRole {
		switch {
		case t == "":
		case indent(l) <= depth || goTestFail.MatchString(l) || strings.HasPrefix(t, "=== "):
			return endBefore
		case goTestLog.MatchString(l):
			logged = append(logged, t)
		}
		return inBlock
	})
	if len(logged) == 0 {
		logged = r.goTestLog[name]
	}
	if len(logged) == 0 && j < len(r.lines) {
		if next := goTestFail.FindStringSubmatch(r.lines[j]); next != nil && strings.HasPrefix(next[2], name+"/") {
			return j - i // a parent failing because a subtest did: the subtest says why
		}
	}
	lines := []string{r.trim(i)}
	if len(logged) > 2 {
		logged = logged[:2]
	}
	lines = append(lines, logged...)
	r.add(Finding{Kind: Test, Severity: Error, Lines: lines, key: strings.Join(lines, "\n")}, name)
	r.goTest = ""
	return j - i
}

// Rust: "thread 'main' panicked at src/main.rs:4:5:" and the message on the
// next lines (an assertion's left and right), or the older one-line form.
var rustPanicRe = later(`^thread '[^']*'(?: \(\d+\))? panicked at .+`)

func (r *reader) rustPanic(i int) int {
	if !strings.HasPrefix(r.trim(i), "thread '") {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	if !rustPanicRe.MatchString(t) {
		return 0
	}
	lines := []string{t}
	j := i + 1
	if strings.HasSuffix(t, ":") {
		j = r.scan(j, func(_ int, _, n string) lineRole {
			if len(lines) >= 4 || n == "" || strings.HasPrefix(n, "note: ") || strings.HasPrefix(n, "stack backtrace:") {
				return endBefore
			}
			lines = append(lines, n)
			return inBlock
		})
	}
	// A backtrace (RUST_BACKTRACE=1): numbered frames and "at" lines; the
	// innermost frame of the project's own code is kept.
	fn, frame := "", ""
	j = r.scan(j, func(_ int, _, n string) lineRole {
		switch {
		case rustFrame.MatchString(n):
			fn = n
		case strings.HasPrefix(n, "at "):
			if frame == "" && projectPath(n) && !strings.HasPrefix(n, "at /rustc/") {
				frame = fn + " " + n
			}
		case n == "stack backtrace:" || strings.HasPrefix(n, "note: "):
		default:
			return endBefore
		}
		return inBlock
	})
	if frame != "" {
		lines = append(lines, frame)
	}
	r.add(Finding{Kind: Exception, Severity: Error, Lines: lines, key: strings.Join(lines, "\n")}, "")
	return j - i
}

var rustFrame = later(`^\d+: \S+`)

// rustc and cargo: "error[E0308]: mismatched types" with its " --> path"
// location a few lines below.
var (
	rustHeadline = later(`^(error|warning)(\[[A-Z]+\d+\])?: (.+)$`)
	rustArrow    = later(`^\s*--> (\S+:\d+:\d+)$`)
)

func (r *reader) rustDiagnostic(i int) int {
	if !strings.HasPrefix(r.lines[i], "error") && !strings.HasPrefix(r.lines[i], "warning") {
		return 0 // a cheap look before the expressions
	}
	m := rustHeadline.FindStringSubmatch(r.lines[i])
	if m == nil {
		return 0
	}
	for k := i + 1; k < len(r.lines) && k <= i+3; k++ {
		if rustArrow.MatchString(r.lines[k]) {
			sev := Warning
			if m[1] == "error" {
				sev = Error
			}
			// Skip the excerpt with its carets and notes, up to the next
			// headline.
			j := r.scan(k+1, func(_ int, l, t string) lineRole {
				if t == "" || rustHeadline.MatchString(l) {
					return endBefore
				}
				return inBlock
			})
			r.add(Finding{Kind: Diagnostic, Severity: sev, Lines: []string{r.trim(i), r.trim(k)}, key: r.trim(i)}, "")
			return j - i
		}
	}
	return 0
}

// Sanitizers: "==123==ERROR: AddressSanitizer: heap-buffer-overflow …",
// numbered frames, "SUMMARY: AddressSanitizer: … file.c:12:5 in main".
var (
	sanitizerStart = later(`^==\d+==\s*ERROR: \w*Sanitizer: .+|^WARNING: \w*Sanitizer: .+|^\S+:\d+:\d+: runtime error: .+`)
	sanitizerFrame = later(`^#\d+ 0x[0-9a-f]+ in (\S+) (\S+)`)
)

func (r *reader) sanitizer(i int) int {
	if !strings.Contains(r.lines[i], "Sanitizer") && !strings.Contains(r.lines[i], "runtime error:") {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	if !sanitizerStart.MatchString(t) || strings.Contains(t, "runtime error:") && !strings.HasPrefix(t, "==") {
		return 0
	}
	// The access, its innermost project frame, where the memory was, and
	// the innermost project frame of where it was allocated or freed.
	var access, accessFrame, located, allocFrame string
	inAlloc := false
	j := r.scan(i+1, func(_ int, _, n string) lineRole {
		if m := sanitizerFrame.FindStringSubmatch(n); m != nil {
			if projectPath(m[2]) && !strings.HasPrefix(m[2], "(") {
				switch {
				case !inAlloc && accessFrame == "":
					accessFrame = n
				case inAlloc && allocFrame == "":
					allocFrame = n
				}
			}
			return inBlock
		}
		switch {
		case access == "" && sanitizerAccess.MatchString(n):
			access = n
		case located == "" && strings.Contains(n, " is located "):
			located = n
		case strings.Contains(n, " by thread ") && strings.HasSuffix(n, " here:"):
			inAlloc = true
		case strings.HasPrefix(n, "SUMMARY: "):
			return endBefore // a line of its own
		case strings.HasPrefix(n, "==") && strings.Contains(n, "ABORTING"):
			return endWith
		}
		return inBlock
	})
	lines := present(t, access, accessFrame, located, allocFrame)
	r.add(Finding{Kind: Exception, Severity: Error, Lines: lines, key: t}, "")
	return j - i
}

var sanitizerAccess = later(`^(?:READ|WRITE) of size \d+ at 0x[0-9a-f]+`)

// valgrind: "==123== Invalid read of size 4" and its "at"/"by" frames.
var (
	valgrindStart = later(`^==\d+== (Invalid (?:read|write|free\(\)|free\(\) / delete / delete\[\] / realloc\(\)) .*|Conditional jump or move depends on uninitialised value.*|Use of uninitialised value.*|Syscall param .*|Mismatched free.*|Process terminating with default action of signal.*|\d[\d,]* (?:\(.*\) )?bytes in [\d,]+ blocks are (?:definitely|possibly) lost.*|Source and destination overlap.*)$`)
	valgrindFrame = later(`^==\d+==\s+(?:at|by) 0x[0-9A-Fa-f]+: .+\((\S+?):\d+\)$`)
)

func (r *reader) valgrind(i int) int {
	if !strings.HasPrefix(r.trim(i), "==") {
		return 0 // a cheap look before the expressions
	}
	m := valgrindStart.FindStringSubmatch(r.trim(i))
	if m == nil {
		return 0
	}
	lines := []string{r.trim(i)}
	frames, address := 0, ""
	j := r.scan(i+1, func(_ int, _, n string) lineRole {
		if f := valgrindFrame.FindStringSubmatch(n); f != nil {
			// The first two frames of the error (not of where its block was
			// allocated), the allocator's own left out.
			if address == "" && frames < 2 && !strings.HasPrefix(f[1], "vg_") {
				lines = append(lines, n)
				frames++
			}
			return inBlock
		}
		switch {
		case strings.HasPrefix(n, "==") && strings.Contains(n, "Address 0x") && address == "":
			address = n
		case strings.HasPrefix(n, "==") && (strings.Contains(n, " at 0x") || strings.Contains(n, " by 0x") || strings.Contains(n, "Block was") || strings.Contains(n, "Uninitialised value")):
		default:
			return endBefore
		}
		return inBlock
	})
	if address != "" {
		lines = append(lines, address)
	}
	r.add(Finding{Kind: Exception, Severity: Error, Lines: lines, key: lines[0][strings.Index(lines[0], "== ")+3:]}, "")
	return j - i
}

// stackTrace: an exception headline followed by "at" frames (Java, Kotlin,
// JavaScript, C#), with "Caused by:" chains. Kept: the headline and the
// innermost frame of the project's code.
var (
	atFrame   = later(`^\s+at\s+\S`)
	javaFrame = later(`^at (?:[\w$]+/)?([\w$.<>]+)\(([^)]*)\)$`)
	jsFrame   = later(`^at (?:async )?(?:(.+?) \((.+)\)|(\S+))(?: \{)?$`)
)

func (r *reader) stackTrace(i int) int {
	if !mayBeException(r.trim(i)) {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	if !exceptionLine(t) {
		return 0
	}
	// The message may run on for a few lines before the frames.
	k := i + 1
	for ; k < len(r.lines) && k <= i+6; k++ {
		if atFrame.MatchString(r.lines[k]) {
			break
		}
		if r.trim(k) == "" && k > i+1 {
			return 0
		}
	}
	if k >= len(r.lines) || !atFrame.MatchString(r.lines[k]) {
		return 0
	}
	frame, source, version := "", "", ""
	// Node prints where an uncaught error was thrown above it: "/app/x.js:3",
	// the source line, a caret; a tool that crashed names its version
	// ("ESLint: 8.57.1").
	for k := i - 1; k >= 0 && k >= i-4 && version == ""; k-- {
		if n := r.trim(k); toolVersion.MatchString(n) {
			version = n
		}
	}
	for k := i - 1; k >= 0 && k >= i-5; k-- {
		if n := r.trim(k); locOnly.MatchString(n) && projectPath(n) {
			frame = n
			if k+1 < i && strings.Trim(r.trim(k+1), "^ ") != "" {
				source = r.trim(k + 1)
			}
			break
		}
	}
	// The innermost project frame, and where the project called into a
	// library below it (a stream, a framework) when the exception came
	// from inside the library's call.
	caller, libraryAfter := "", false
	j := r.scan(k, func(_ int, l, n string) lineRole {
		if atFrame.MatchString(l) {
			project := projectFrame(n)
			switch {
			case (frame == "" || locOnly.MatchString(frame)) && project:
				frame = n
			case frame != "" && !project:
				libraryAfter = true
			case frame != "" && project && libraryAfter && caller == "":
				caller = n
			}
			return inBlock
		}
		if strings.HasPrefix(n, "... ") && strings.HasSuffix(n, " more") || n == "^" || strings.HasPrefix(n, "Suppressed: ") {
			return inBlock
		}
		return endBefore
	})
	lines := present(t, frame, source, caller, version)
	r.add(Finding{Kind: Exception, Severity: Error, Lines: lines, key: t}, "")
	return j - i
}

var toolVersion = later(`^[A-Z][\w.-]*: v?\d+\.\d+(?:\.\d+)?$`)

var locOnly = later(`^(?:file://)?\S+\.\w+:\d+$`)

// projectFrame reports whether an "at" frame is the project's code.
func projectFrame(frame string) bool {
	if m := javaFrame.FindStringSubmatch(frame); m != nil && !strings.Contains(m[2], "/") && !strings.Contains(m[2], "\\") {
		for _, lib := range []string{"java.", "javax.", "jdk.", "sun.", "com.sun.", "kotlin.", "kotlinx.", "scala.", "org.junit.", "junit.", "org.opentest4j.", "org.apache.maven.", "org.gradle.", "org.springframework.", "worker.org.gradle.", "System.", "Microsoft."} {
			if strings.HasPrefix(m[1], lib) {
				return false
			}
		}
		return strings.Contains(m[2], ":") // a source line, not "Native Method" or "Unknown Source"
	}
	if m := jsFrame.FindStringSubmatch(frame); m != nil {
		loc := m[2]
		if loc == "" {
			loc = m[3]
		}
		return projectPath(loc) && strings.Contains(loc, ":")
	}
	return false
}

// pytest: a failure's section ("____ test_name ____") with its "E" lines and
// the location "tests/test_x.py:12: AssertionError"; its summary line
// "FAILED tests/test_x.py::test_name - AssertionError: …" comes later.
var (
	pytestHeader   = later(`^_{3,} (.+?) _{3,}$`)
	pytestLocation = later(`^(\S+\.py):(\d+): (\S.*)$`)
	pytestSummary  = later(`^(FAILED|ERROR) (\S+)(?: - (.+))?$`)
	sectionEnd     = later(`^(?:={3,}|-{3,} (?:Captured|generated))`)
)

func (r *reader) pytestSection(i int) int {
	if !strings.HasPrefix(r.trim(i), "___") {
		return 0 // a cheap look before the expressions
	}
	m := pytestHeader.FindStringSubmatch(r.trim(i))
	if m == nil || strings.Contains(m[1], "coverage") || strings.HasPrefix(m[1], "summary") {
		return 0
	}
	name := strings.TrimPrefix(m[1], "ERROR at setup of ")
	name = strings.TrimPrefix(name, "ERROR at teardown of ")
	name = strings.TrimPrefix(name, "ERROR collecting ")
	var asserts []string
	first, loc, via := "", "", ""
	j := r.scan(i+1, func(_ int, l, n string) lineRole {
		if pytestHeader.MatchString(n) || sectionEnd.MatchString(n) {
			return endBefore
		}
		if first == "" && n != "" && !startsWithSpace(l) && errorScore(n) >= 2 && !CodeLike(n) && !strings.HasPrefix(n, "E ") && len(strings.Fields(n)) >= 3 {
			first = n // "ImportError while importing test module '…'."
		}
		// The first "E" line says what failed; those that follow and compare
		// say how ("E  {'total': 3} != {'total': 4}").
		if (strings.HasPrefix(n, "E ") || n == "E") && len(strings.TrimSpace(n[1:])) > 0 && !strings.HasSuffix(n, ":") {
			if len(asserts) == 0 || len(asserts) < 3 && (strings.Contains(n, "!=") || strings.Contains(n, " == ") || strings.Contains(n, "where ")) {
				asserts = append(asserts, n)
			}
		}
		if lm := pytestLocation.FindStringSubmatch(n); lm != nil {
			if strings.HasPrefix(lm[3], "in ") {
				via = n // "tests/conftest.py:31: in db" (--tb=short, collection errors)
			} else {
				loc = n
			}
		}
		return inBlock
	})
	if loc == "" {
		loc = via
	}
	var lines []string
	if strings.Contains(m[1], "ERROR at ") {
		lines = append(lines, r.trim(i)) // setup or teardown: which one failed
	}
	if len(asserts) > 2 {
		// The comparisons under the first line share one.
		asserts = []string{asserts[0], strings.Join(asserts[1:], " ")}
	}
	lines = append(lines, present(append(append([]string{first}, asserts...), loc)...)...)
	if len(lines) == 0 {
		lines = []string{r.trim(i)}
	}
	// Tests that fail the same way are one finding (a broken fixture): the
	// key is how, not which.
	key := strings.Join(lines, "\n")
	if len(asserts) > 0 {
		key = asserts[0] + "\n" + loc
	}
	if p, ok := r.progress[name]; ok {
		lines = append([]string{p}, lines...) // -v printed its verdict first
	}
	r.add(Finding{Kind: Test, Severity: Error, Lines: lines, key: key}, "pytest:"+name)
	return j - i
}

// pytestSummary completes a section's finding with its "FAILED" line, or
// records a failure whose section was not printed (-q --tb=no).
func (r *reader) pytestSummary(t string) bool {
	if m := pytestProgress.FindStringSubmatch(t); m != nil {
		// pytest -v prints each test's verdict before its failure's
		// section: the section takes it.
		if r.progress == nil {
			r.progress = map[string]string{}
		}
		parts := strings.Split(m[1], "::")
		for k := 1; k < len(parts); k++ {
			r.progress[strings.Join(parts[k:], ".")] = t
		}
		return true
	}
	m := pytestSummary.FindStringSubmatch(t)
	if m == nil || !strings.Contains(m[2], "::") && !strings.HasSuffix(m[2], ".py") {
		return false
	}
	node := m[2]
	if k, ok := r.findPytest(node); ok {
		f := &r.findings[k]
		f.Lines = append([]string{t}, f.Lines...)
		return true
	}
	r.add(Finding{Kind: Test, Severity: Error, Lines: []string{t}, key: t}, "")
	return true
}

// findPytest finds the section of a node id: "tests/test_x.py::TestA::test_b[1]"
// has the section "TestA.test_b[1]".
func (r *reader) findPytest(node string) (int, bool) {
	parts := strings.Split(node, "::")
	for k := 1; k < len(parts); k++ {
		if i, ok := r.named["pytest:"+strings.Join(parts[k:], ".")]; ok {
			delete(r.named, "pytest:"+strings.Join(parts[k:], "."))
			return i, true
		}
	}
	return 0, false
}

// Jest: "● Suite › test", then the matcher, Expected and Received, a code
// frame and the frames.
func (r *reader) jestFailure(i int) int {
	if !strings.HasPrefix(r.trim(i), "● ") {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	if strings.HasPrefix(t, "● Console") {
		return 0
	}
	lines := []string{t}
	msg, expected, received, frame := "", "", "", ""
	var diff []string
	j := r.scan(i+1, func(_ int, l, n string) lineRole {
		switch {
		case strings.HasPrefix(n, "● ") || n != "" && !startsWithSpace(l):
			return endBefore
		case n == "" || strings.HasPrefix(n, "|") || jestCodeFrame.MatchString(n):
		case diffLine(n) && !strings.HasPrefix(n, "- Snapshot") && !strings.HasPrefix(n, "+ Received"):
			if len(diff) < 2 {
				diff = append(diff, n) // a snapshot's or an object's changed lines
			}
		case strings.HasPrefix(n, "Expected") && expected == "":
			expected = n
		case strings.HasPrefix(n, "Received") && received == "":
			received = n
		case atFrame.MatchString(l):
			if frame == "" && projectFrame(n) {
				frame = n
			}
		case msg == "":
			msg = n
		}
		return inBlock
	})
	lines = append(lines, present(msg, expected, received, strings.Join(diff, " "), frame)...)
	r.add(Finding{Kind: Test, Severity: Error, Lines: lines, key: t}, "")
	return j - i
}

var jestCodeFrame = later(`^>?\s*\d+ \|`)

// Vitest: " FAIL  src/x.test.ts > suite > test", the error, "❯ file:line:col".
var vitestFail = later(`^FAIL\s+\S+\.\w+ > .+`)

func (r *reader) vitestFailure(i int) int {
	if !strings.HasPrefix(r.trim(i), "FAIL") {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	if !vitestFail.MatchString(t) {
		return 0
	}
	msg, frame := "", ""
	j := r.scan(i+1, func(_ int, _, n string) lineRole {
		switch {
		case vitestFail.MatchString(n) || strings.HasPrefix(n, "⎯"):
			return endBefore
		case strings.HasPrefix(n, "❯ "):
			if frame == "" && projectPath(n) {
				frame = n
			}
		case msg == "" && n != "" && !strings.HasPrefix(n, "- ") && !strings.HasPrefix(n, "+ ") && !jestCodeFrame.MatchString(n):
			msg = n
		}
		return inBlock
	})
	lines := present(t, msg, frame)
	r.add(Finding{Kind: Test, Severity: Error, Lines: lines, key: t}, "")
	return j - i
}

// TAP (node --test, prove): "not ok 3 - name" and its YAML block with the
// error and the location.
var tapNotOK = later(`^not ok \d+ - (.+?)(?: # .*)?$`)

func (r *reader) tapFailure(i int) int {
	if !strings.HasPrefix(r.trim(i), "not ok ") {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	m := tapNotOK.FindStringSubmatch(t)
	if m == nil {
		return 0
	}
	msg, loc, frame := "", "", ""
	var diff []string
	j := i + 1
	if j < len(r.lines) && r.trim(j) == "---" {
		inStack := false
		j = r.scan(j+1, func(j int, _, n string) lineRole {
			switch {
			case n == "...":
				return endWith
			case strings.HasPrefix(n, "location: "):
				loc = n
			case strings.HasPrefix(n, "stack: "):
				inStack = true
			case strings.HasPrefix(n, "error: ") && msg == "":
				msg = n
				if v := strings.TrimSpace(strings.TrimPrefix(n, "error: ")); v == "|-" || v == "|" || v == ">-" {
					msg = ""
					for k := j + 1; k < len(r.lines); k++ {
						if v := r.trim(k); v != "" {
							msg = v
							break
						}
					}
				}
			case len(diff) < 2 && diffLine(n):
				diff = append(diff, n) // an assertion's actual and expected
			case inStack && frame == "" && strings.Contains(n, "(") && projectFrame("at "+n):
				frame = n
			case strings.HasSuffix(n, ":") && !strings.Contains(n, " "):
				inStack = false
			}
			return inBlock
		})
	}
	if strings.Contains(msg, "subtest failed") || strings.Contains(msg, "subtests failed") {
		return j - i // a suite failing because its tests did: they say why
	}
	lines := []string{t}
	for _, l := range []string{msg, strings.Join(diff, " "), loc, frame} {
		if l != "" && len(lines) < DefaultLimits.LinesPerFinding {
			lines = append(lines, l)
		}
	}
	r.add(Finding{Kind: Test, Severity: Error, Lines: lines, key: t}, "")
	return j - i
}

// node --test's spec reporter: "✖ name (1.2ms)" with the error indented
// below; its closing "✖ failing tests:" list repeats them.
var (
	specFail     = later(`^✖ (.+?)(?: \([\d.]+m?s\))?$`)
	problemCount = later(`^✖ \d+ problems? `) // ESLint's closing count
)

func (r *reader) specFailure(i int) int {
	if !strings.HasPrefix(r.trim(i), "✖") {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	if t == "✖ failing tests:" {
		// The closing list repeats each failure, with where its test is
		// ("test at test/x.test.js:25:3") above it: that line only is new.
		for j := i + 1; j+1 < len(r.lines); j++ {
			n := r.trim(j)
			if !strings.HasPrefix(n, "test at ") {
				continue
			}
			if m := specFail.FindStringSubmatch(r.trim(j + 1)); m != nil {
				if k, ok := r.named["spec:"+m[1]]; ok {
					f := &r.findings[k]
					f.Lines = append(f.Lines[:1], append([]string{n}, f.Lines[1:]...)...)
				}
			}
		}
		r.done = true
		return len(r.lines) - i
	}
	m := specFail.FindStringSubmatch(t)
	if m == nil || problemCount.MatchString(t) {
		return 0
	}
	depth := indent(r.lines[i])
	msg, frame, where := "", "", ""
	var diff []string
	j := r.scan(i+1, func(_ int, l, n string) lineRole {
		switch {
		case n == "":
		case indent(l) <= depth:
			return endBefore
		case atFrame.MatchString(l):
			if frame == "" && projectFrame(n) {
				frame = n
			}
		case strings.HasPrefix(n, "test at "):
			where = n
		case msg == "":
			msg = n
		case len(diff) < 2 && diffLine(n):
			diff = append(diff, n)
		}
		return inBlock
	})
	if msg == "" || strings.Contains(msg, "subtest failed") || strings.Contains(msg, "subtests failed") {
		return j - i
	}
	lines := []string{t}
	for _, l := range []string{where, msg, strings.Join(diff, " "), frame} {
		if l != "" && len(lines) < DefaultLimits.LinesPerFinding-1 {
			lines = append(lines, l)
		}
	}
	r.add(Finding{Kind: Test, Severity: Error, Lines: lines, key: t}, "spec:"+m[1])
	return j - i
}

// PHPUnit and JUnit 4: "1) CalcTest::testAdd" or "1) testAdd(com.x.CalcTest)",
// the message, and for PHPUnit the location "/path/CalcTest.php:12".
var (
	numberedTest = later(`^\d+\) (?:[\w\\]+::\w+.*|\w+\([\w.$]+\))$`)
	phpLocation  = later(`^\S+\.php:\d+$`)
)

func (r *reader) phpunitFailure(i int) int {
	if !startsWithDigitParen(r.trim(i)) {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	if !numberedTest.MatchString(t) {
		return 0
	}
	if strings.Contains(t, "(") && !strings.Contains(t, "::") {
		// JUnit 4: the exception and its frames follow; the stack trace
		// reader takes them.
		r.add(Finding{Kind: Test, Severity: Error, Lines: []string{t}, key: t}, "")
		return 1
	}
	var msg []string
	loc := ""
	j := r.scan(i+1, func(_ int, _, n string) lineRole {
		switch {
		case numberedTest.MatchString(n) || strings.HasPrefix(n, "FAILURES!") || strings.HasPrefix(n, "ERRORS!") || strings.HasPrefix(n, "--"):
			return endBefore
		case phpLocation.MatchString(n):
			if loc == "" && projectPath(n) {
				loc = n
			}
		case n == "":
			if len(msg) > 0 {
				msg = append(msg, "") // the message ends at its first blank line
			}
		case len(msg) < 2 && (len(msg) == 0 || msg[len(msg)-1] != ""):
			msg = append(msg, n) // a custom message, then "Failed asserting that …"
		}
		return inBlock
	})
	lines := present(append(append([]string{t}, msg...), loc)...)
	r.add(Finding{Kind: Test, Severity: Error, Lines: lines, key: t}, "")
	return j - i
}

// grpcurl: "ERROR:" then "  Code: NotFound" and "  Message: …".
func (r *reader) grpcurlError(i int) int {
	if r.trim(i) != "ERROR:" || i+1 >= len(r.lines) || !strings.HasPrefix(r.trim(i+1), "Code: ") {
		return 0
	}
	lines := []string{r.trim(i + 1)}
	j := i + 2
	if j < len(r.lines) && strings.HasPrefix(r.trim(j), "Message: ") {
		lines = append(lines, r.trim(j))
		j++
	}
	// The status details grpcurl prints as JSON: the reason and the fields
	// named, on one line.
	var details []string
	j = r.scan(j, func(_ int, l, n string) lineRole {
		if !startsWithSpace(l) && n != "Details:" && !detailItem.MatchString(n) && n != "}" {
			return endBefore
		}
		if jsonErrorKey.MatchString(n) && !strings.HasPrefix(n, `"description"`) || strings.HasPrefix(n, `"reason"`) || strings.HasPrefix(n, `"field"`) {
			details = append(details, n)
		}
		return inBlock
	})
	if len(details) > 0 {
		lines = append(lines, strings.Join(details, " "))
	}
	r.add(Finding{Kind: Status, Severity: Error, Lines: lines, key: strings.Join(lines, "\n")}, "")
	return j - i
}

var detailItem = later(`^\d+\)\s+\{$`)

// Terraform: "Error: Summary", then where ("on main.tf line 4, in …:"), the
// source line and the values involved, then an explanation; in colour inside
// a box whose lines start with "│". Kept: the summary, where, the source
// line, the values and the explanation's first line.
var (
	tfHeadline = later(`^(?:│\s*)?(Error|Warning): (.+)$`)
	tfOn       = later(`^on (\S+) line (\d+)`)
	tfSource   = later(`^\d+: `)
)

func (r *reader) terraformError(i int) int {
	if !strings.Contains(r.lines[i], "Error: ") && !strings.Contains(r.lines[i], "Warning: ") {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	m := tfHeadline.FindStringSubmatch(t)
	if m == nil {
		return 0
	}
	boxed := strings.HasPrefix(t, "│")
	// Without a box, the structure says it: a blank line, then "on … line N".
	if !boxed && !(i+2 < len(r.lines) && r.trim(i+1) == "" && tfOn.MatchString(r.trim(i+2))) {
		return 0
	}
	lines := []string{t}
	on, source, explained := "", "", false
	var values []string
	blank := 0
	j := r.scan(i+1, func(j int, l, raw string) lineRole {
		n := strings.TrimSpace(strings.TrimPrefix(raw, "│"))
		if raw == "╵" {
			return endWith
		}
		if raw == "╷" || tfHeadline.MatchString(raw) && j > i+1 {
			return endBefore
		}
		if n == "" {
			blank++
			if explained || blank >= 2 && !boxed {
				return endBefore
			}
			return inBlock
		}
		blank = 0
		switch {
		case on == "" && tfOn.MatchString(n):
			on = raw
		case on != "" && source == "" && tfSource.MatchString(n):
			source = raw
		case strings.HasPrefix(n, "├") || strings.HasPrefix(n, "╵"):
		case strings.HasPrefix(n, "│") || strings.HasPrefix(raw, "│ │") || strings.HasPrefix(l, "    │"):
			values = append(values, raw)
		case !explained && !startsWithSpace(l) || boxed && !explained && on != "":
			lines = append(lines, "")
			lines[len(lines)-1] = raw
			explained = true
		}
		return inBlock
	})
	expl := ""
	if explained {
		expl = lines[len(lines)-1]
		lines = lines[:len(lines)-1]
	}
	lines = append(lines, present(on, source, strings.Join(values, " "), expl)...)
	sev := Error
	if m[1] == "Warning" {
		sev = Warning
	}
	r.add(Finding{Kind: Diagnostic, Severity: sev, Lines: lines, key: m[2] + "\n" + on}, "")
	return j - i
}

// PostgreSQL: "ERROR:  relation \"x\" does not exist" (psql may prefix the
// script and line), then LINE, DETAIL, HINT, CONTEXT lines.
var (
	pgError  = later(`^(?:psql:\S+?:\d+: )?(?:ERROR|FATAL|PANIC):  ?\S.*`)
	pgDetail = later(`^(?:LINE \d+: |DETAIL:  |HINT:  |CONTEXT:  |LOCATION:  |QUERY:  |\s+\^$)`)
)

func (r *reader) sqlError(i int) int {
	if !strings.Contains(r.lines[i], "ERROR:") && !strings.Contains(r.lines[i], "FATAL:") && !strings.Contains(r.lines[i], "PANIC:") {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	if !pgError.MatchString(t) {
		return 0
	}
	if !strings.HasPrefix(t, "psql:") && !strings.Contains(t, ":  ") && (i+1 >= len(r.lines) || !pgDetail.MatchString(r.lines[i+1])) {
		return 0 // pip's "ERROR: Could not find…" and the like: a line of their own
	}
	lines := []string{t}
	detail, hint, context, where := "", "", "", ""
	j := i + 1
	for ; j < len(r.lines) && (pgDetail.MatchString(r.lines[j]) || strings.TrimSpace(r.lines[j]) == "^" || r.trim(j) != "" && (startsWithSpace(r.lines[j]) || j+1 < len(r.lines) && pgDetail.MatchString(r.lines[j+1]))); j++ {
		n := r.trim(j)
		switch {
		case strings.HasPrefix(n, "DETAIL:") && detail == "":
			detail = n
		case strings.HasPrefix(n, "HINT:") && hint == "":
			hint = n
		case strings.HasPrefix(n, "CONTEXT:") && context == "":
			context = n
		case strings.HasPrefix(n, "LINE ") && where == "":
			where = n
		}
	}
	lines = append(lines, present(detail, hint, where, context)...)
	r.add(Finding{Kind: Status, Severity: Error, Lines: lines, key: t}, "")
	return j - i
}

// ESLint's stylish format: a file's path alone on a line, then its problems
// indented, "  12:5  error  'x' is not defined  no-undef". Each is kept with
// its file in front.
var (
	eslintProblem = later(`^\s+(\d+):(\d+)\s+(error|warning)\s+(.+?)(?:\s{2,}(\S+))?$`)
	pathOnly      = later(`^(?:[A-Za-z]:)?(?:[\w@+~.\-]*[/\\])+[\w@+~.\-]+\.\w{1,12}$`)
)

func (r *reader) eslintFile(i int) int {
	if strings.ContainsAny(r.trim(i), " \t") || !strings.Contains(r.trim(i), ".") {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	if !pathOnly.MatchString(t) || i+1 >= len(r.lines) || !eslintProblem.MatchString(r.lines[i+1]) {
		return 0
	}
	j := r.scan(i+1, func(_ int, l, n string) lineRole {
		m := eslintProblem.FindStringSubmatch(l)
		if m == nil {
			return endBefore
		}
		sev := Warning
		if m[3] == "error" {
			sev = Error
		}
		r.add(Finding{Kind: Diagnostic, Severity: sev, Lines: []string{t + "  " + n}, key: m[4] + "  " + m[5]}, "")
		return inBlock
	})
	return j - i
}

// A Python syntax error has no traceback: `File "x.py", line 3`, the source
// line and a caret, then "SyntaxError: invalid syntax".
func (r *reader) pythonSyntaxError(i int) int {
	if !strings.HasPrefix(r.trim(i), `File "`) {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	if !strings.Contains(t, `", line `) {
		return 0
	}
	for k := i + 1; k < len(r.lines) && k <= i+5; k++ {
		if startsWithSpace(r.lines[k]) || r.trim(k) == "" {
			continue
		}
		exc := r.trim(k)
		if !exceptionLine(exc) {
			return 0
		}
		lines := []string{exc, t}
		if src := r.trim(i + 1); i+1 < k && strings.Trim(src, "^~ ") != "" {
			lines = append(lines, src)
		}
		r.add(Finding{Kind: Exception, Severity: Error, Lines: lines, key: exc}, "")
		return k + 1 - i
	}
	return 0
}

// A failure mark before a test's name ("✗ rejects empty input", "✕ adds",
// "× parses dates 3ms"): the test, and the message and frame indented below.
var markedFail = later(`^(?:[✗✕×✘]|\(fail\)) \S.*`)

func (r *reader) markedFailure(i int) int {
	if !mayBeMarked(r.trim(i)) {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	if !markedFail.MatchString(t) {
		return 0
	}
	depth := indent(r.lines[i])
	lines := []string{t}
	j := r.scan(i+1, func(_ int, l, n string) lineRole {
		if n == "" || indent(l) <= depth || markedFail.MatchString(n) {
			return endBefore
		}
		if len(lines) < 3 && (!atFrame.MatchString(l) || projectFrame(n)) {
			lines = append(lines, n)
		}
		return inBlock
	})
	r.add(Finding{Kind: Test, Severity: Error, Lines: lines, key: t}, "")
	return j - i
}

// An HTTP response with an error status: the status line, the headers that
// say what to do (Retry-After, WWW-Authenticate) and the body's lines that
// say what went wrong (an error message, the fields it names, an HTML
// page's heading).
var (
	httpErrStatus = later(`^(?:< )?HTTP/[\d.]+ [45]\d\d\b`)
	httpAdvice    = later(`^(?:< )?(?i:retry-after|www-authenticate|x-ratelimit-reset|ratelimit-reset|location|x-error|x-request-id|grpc-status|grpc-message):`)
	httpNextResp  = later(`^(?:< )?HTTP/[\d.]+ \d{3}\b|^\* Connection .* left intact|^\* Closing connection`)
)

func (r *reader) httpResponse(i int) int {
	if !strings.Contains(r.lines[i], "HTTP/") {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	if !httpErrStatus.MatchString(t) {
		return 0
	}
	if i == r.firstLine() {
		r.failed = true // a response that opens with its error status failed, whatever curl's exit code
	}
	lines := []string{t}
	var body []string
	j := r.scan(i+1, func(_ int, _, n string) lineRole {
		switch {
		case httpNextResp.MatchString(n):
			return endBefore
		case httpAdvice.MatchString(n):
			lines = append(lines, n)
		case bodyErrorLine(n):
			body = append(body, n)
		}
		return inBlock
	})
	lines = append(lines, body...)
	r.add(Finding{Kind: Status, Severity: Error, Lines: lines, key: t}, "")
	return j - i
}

// jsonErrorKey is a line of an error body printed as JSON: the keys an API
// names its error with.
var jsonErrorKey = later(`^"(?:message|error|error_description|detail|details|title|reason|description|field|code|errorMessage|msg|hint|cause)"\s*:\s*(?:"[^"]|[0-9])`)

var htmlText = later(`<[^>]+>`)

// bodyErrorLine reports whether a line of a response body says what went
// wrong: a JSON error key, a one-line JSON error, an HTML line with an error
// word or code.
func bodyErrorLine(n string) bool {
	if jsonErrorKey.MatchString(n) || strings.HasPrefix(n, `{"error"`) || strings.HasPrefix(n, `{"message"`) || strings.HasPrefix(n, `{"detail"`) {
		return true
	}
	if strings.HasPrefix(n, "<") {
		text := strings.TrimSpace(htmlText.ReplaceAllString(n, " "))
		return text != "" && !strings.HasPrefix(strings.ToLower(n), "<title") && errorScore(text) >= 2
	}
	return false
}

// A unified diff's file header ("--- old/main.tf" over "+++ new/main.tf")
// in a failed output names a file a check wants changed (terraform fmt
// -check -diff, gofmt -d, black --diff).
func (r *reader) diffHeader(i int) int {
	if !strings.HasPrefix(r.trim(i), "--- ") {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	if i+1 >= len(r.lines) || !strings.HasPrefix(r.trim(i+1), "+++ ") {
		return 0
	}
	r.add(Finding{Kind: Diagnostic, Severity: Plain, Lines: []string{t}, key: t}, "")
	return 2
}

// Go's module errors: "go: example.com/x imports" and, indented below, the
// package that could not be had and why.
func (r *reader) goImports(i int) int {
	if !strings.HasPrefix(r.trim(i), "go: ") {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	if !strings.HasSuffix(t, " imports") {
		return 0
	}
	j := i + 1
	last := ""
	for ; j < len(r.lines) && startsWithSpace(r.lines[j]); j++ {
		last = r.trim(j)
	}
	if last == "" {
		return 0
	}
	r.add(Finding{Kind: Status, Severity: Error, Lines: []string{last}, key: last}, "")
	return j - i
}

// npm prints an error as a run of "npm error" lines: one finding, by the
// lines that say what could not be had or resolved.
var (
	npmCode    = later(`^npm (?:ERR!|error) code E[A-Z0-9]+$`)
	npmLine    = later(`^npm (?:ERR!|error|WARN|warn)(?: |$)`)
	npmTelling = later(`(?:^(?:E[A-Z0-9]+|\d{3})\s+\S|^Found: |^peer |^Missing: |^Invalid: |Could not resolve|No matching|notarget|Missing script|not in this registry|could not be found|Invalid|Cannot|ENOENT|EACCES|ENOTEMPTY|EEXIST|gyp|Unsupported|is not|must|missing|Conflicting)`)
	npmGeneric = later(`^npm (?:ERR!|error)(?:\s*$| {2,}| (?:code |errno |A complete log|For a full report|/\S+\.(?:log|txt)$|Fix the upstream|While resolving|node_modules/|path |command |signal |syscall |Lifecycle script|Failed at|This is probably|Exit status|Test failed|Note that you|tarball, folder|404\s*$|Run "npm help|Usage:|Options:|aliases:|\[-|npm \w+$|Clean install|\S+@\S+ \S+: ))`)
)

func (r *reader) npmBlock(i int) int {
	if !strings.HasPrefix(r.trim(i), "npm ") {
		return 0 // a cheap look before the expressions
	}
	if !npmLine.MatchString(r.trim(i)) {
		return 0
	}
	warn := strings.HasPrefix(strings.ToLower(r.trim(i)), "npm warn")
	var lines []string
	code := ""
	j := i
	for ; j < len(r.lines) && npmLine.MatchString(r.trim(j)) && strings.HasPrefix(strings.ToLower(r.trim(j)), "npm warn") == warn; j++ {
		n := r.trim(j)
		msg := strings.TrimSpace(npmLine.ReplaceAllString(n, ""))
		switch {
		case !warn && npmCode.MatchString(n) && code == "":
			code = n // "code ERESOLVE": the class of the error
		case msg == "" || !warn && npmGeneric.MatchString(n):
			if !warn {
				r.envelope = append(r.envelope, n)
			}
		case len(lines) < 4 && (len(lines) == 0 || npmTelling.MatchString(msg)):
			lines = append(lines, n)
		}
	}
	sev := Error
	if warn {
		sev = Warning
	} else {
		r.failed = true
	}
	switch {
	case len(lines) > 0:
		if code != "" {
			lines = append([]string{code}, lines...)
		}
		r.add(Finding{Kind: Status, Severity: sev, Lines: lines, key: strings.Join(lines, "\n")}, "")
	case code != "":
		r.envelope = append(r.envelope, code) // a code alone: how it ended
	}
	return j - i
}

// rustfmt --check: "Diff in /path/src/lib.rs:46:" a hunk.
var rustfmtDiff = later(`^Diff in (\S+?):(\d+):$`)

func (r *reader) rustfmtDiff(i int) int {
	if !strings.HasPrefix(r.trim(i), "Diff in ") {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	if !rustfmtDiff.MatchString(t) {
		return 0
	}
	r.add(Finding{Kind: Diagnostic, Severity: Plain, Lines: []string{t}, key: "rustfmt diff"}, "")
	return 1
}

// diffLine is a line of an assertion's diff: "+ '-USD 0.05'" (actual) or
// "- 'USD -0.05'" (expected), not the legend "+ actual - expected".
func diffLine(n string) bool {
	return (strings.HasPrefix(n, "+ ") || strings.HasPrefix(n, "- ") || strings.HasPrefix(n, "-  ") || strings.HasPrefix(n, "+  ")) &&
		!strings.Contains(n, " expected") && !strings.Contains(n, " actual") && !strings.HasPrefix(n, "- Expected") && !strings.HasPrefix(n, "+ Received")
}

// sqlite3: "Parse error near line 7: near "LIMT": syntax error", the
// statement and a caret line ("error here ---^") below it.
var sqliteError = later(`^(?:Parse|Runtime) error(?: near line \d+)?: .+`)

func (r *reader) sqliteError(i int) int {
	if !strings.HasPrefix(r.trim(i), "Parse error") && !strings.HasPrefix(r.trim(i), "Runtime error") {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	if !sqliteError.MatchString(t) {
		return 0
	}
	lines := []string{t}
	j := i + 1
	for ; j < len(r.lines) && startsWithSpace(r.lines[j]) && r.trim(j) != ""; j++ {
		if len(lines) < 3 {
			lines = append(lines, r.trim(j))
		}
	}
	r.add(Finding{Kind: Status, Severity: Error, Lines: lines, key: t}, "")
	return j - i
}

// javac: "Foo.java:12: error: cannot find symbol", the source line, a caret,
// and what it could not find ("symbol:   method getPrise()", "location: class
// Catalog"); Maven prints the same with "[ERROR] " in front.
var (
	javacHeadline = later(`^(?:\[(?:ERROR|WARNING)\] )?\S+\.java:(?:\d+|\[\d+,\d+\]):? (?:(?:error|warning): )?\S.*$`)
	javacDetail   = later(`^(?:\[(?:ERROR|WARNING)\]\s+)?(?:symbol|location|required|found|reason):\s+\S.*$`)
)

func (r *reader) javacDiagnostic(i int) int {
	if !strings.Contains(r.lines[i], ".java:") {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	if !javacHeadline.MatchString(t) || strings.HasPrefix(t, "at ") {
		return 0
	}
	f, ok := diagnostic(t, strings.TrimPrefix(strings.TrimPrefix(t, "[ERROR] "), "[WARNING] "), mavenSeverity(t))
	if !ok {
		return 0
	}
	var source string
	var details []string
	j := r.scan(i+1, func(j int, l, n string) lineRole {
		switch {
		case j > i+8:
			return endBefore
		case javacDetail.MatchString(n):
			if len(details) < 3 {
				details = append(details, n)
			}
		case n == "^" || strings.Trim(n, " ^") == "":
		case source == "" && startsWithSpace(l) && len(details) == 0:
			source = n
		case source != "" && startsWithSpace(l):
			// "  cannot find symbol" above the symbol of an invalid method
			// reference: part of the same diagnostic.
		default:
			return endBefore
		}
		return inBlock
	})
	if source != "" {
		f.Lines = append(f.Lines, source) // the line it is in
	}
	f.Lines = append(f.Lines, details...)
	f.key += "\n" + strings.Join(details, "\n")
	r.add(f, "")
	return j - i
}

func mavenSeverity(t string) Severity {
	switch {
	case strings.HasPrefix(t, "[ERROR]"):
		return Error
	case strings.HasPrefix(t, "[WARNING]"):
		return Warning
	}
	return Plain
}

// JUnit 5's console launcher lists each failure as "JUnit Jupiter:Class:
// method()", its source, then "=> exception: message" and frames.
var junitFailure = later(`^JUnit (?:Jupiter|Vintage|Platform Suite):\S.*`)

func (r *reader) junitConsoleFailure(i int) int {
	if !strings.HasPrefix(r.trim(i), "JUnit ") {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	if !junitFailure.MatchString(t) {
		return 0
	}
	exc, frame := "", ""
	j := r.scan(i+1, func(_ int, l, n string) lineRole {
		switch {
		case junitFailure.MatchString(n) || n == "" || !startsWithSpace(l):
			return endBefore
		case strings.HasPrefix(n, "=> ") && exc == "":
			exc = n
		case exc != "" && frame == "" && bareJavaFrame.MatchString(n) && projectFrame("at "+n):
			frame = n
		}
		return inBlock
	})
	if exc == "" {
		return 0
	}
	lines := []string{t, exc}
	if frame != "" {
		lines = append(lines, frame)
	}
	r.add(Finding{Kind: Test, Severity: Error, Lines: lines, key: t}, "")
	return j - i
}

var bareJavaFrame = later(`^[\w$.<>]+\([\w$.]+:\d+\)$`)

// Gradle: "* What went wrong:" and the failure on the next lines.
func (r *reader) gradleFailure(i int) int {
	if r.trim(i) != "* What went wrong:" || i+1 >= len(r.lines) {
		return 0
	}
	lines := []string{r.trim(i + 1)}
	j := i + 2
	for ; j < len(r.lines) && strings.HasPrefix(r.trim(j), ">"); j++ {
		if n := r.trim(j); len(lines) < 3 && !strings.Contains(n, "see the compiler error output") && !strings.Contains(n, "Run with --") {
			lines = append(lines, n)
		}
	}
	r.add(Finding{Kind: Status, Severity: Error, Lines: lines, key: lines[0]}, "")
	r.failed = true
	return j - i
}

// PHP's uncaught exception: "PHP Fatal error:  Uncaught X: msg in f.php:12",
// "Stack trace:", "#0 /app/src/Cart.php(34): f()", chained ones after
// "Next", then "thrown in … on line N". Kept: the headline, the first two
// frames, and each "Next" exception.
var (
	phpUncaught = later(`^(?:PHP )?Fatal error:\s+Uncaught .+`)
	phpFrame    = later(`^#\d+ (\S+?)\(\d+\): .+`)
	phpNext     = later(`^Next \S+: .+`)
)

func (r *reader) phpUncaught(i int) int {
	if !strings.Contains(r.lines[i], "Uncaught") {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	if !phpUncaught.MatchString(t) {
		return 0
	}
	lines := []string{t}
	frames := 0
	j := r.scan(i+1, func(_ int, _, n string) lineRole {
		switch {
		case n == "", n == "Stack trace:", strings.HasPrefix(n, "#") && strings.HasSuffix(n, "{main}"), strings.HasPrefix(n, "thrown in "), strings.HasPrefix(n, "PHP Stack trace:"):
		case phpFrame.MatchString(n):
			if frames < 2 && len(lines) < DefaultLimits.LinesPerFinding && projectPath(phpFrame.FindStringSubmatch(n)[1]) {
				lines = append(lines, n)
				frames++
			}
		case phpNext.MatchString(n):
			if len(lines) < DefaultLimits.LinesPerFinding {
				lines = append(lines, n)
			}
			frames = 1 // one frame of a chained exception
		default:
			return endBefore
		}
		return inBlock
	})
	r.add(Finding{Kind: Exception, Severity: Error, Lines: lines, key: t}, "")
	return j - i
}

// Composer (Symfony Console) prints an exception in a box: "In
// CurlDownloader.php line 365:" and the message, wrapped, indented below.
var consoleException = later(`^In \S+ line \d+:$`)

func (r *reader) consoleException(i int) int {
	if !strings.HasPrefix(r.trim(i), "In ") {
		return 0 // a cheap look before the expressions
	}
	t := r.trim(i)
	if !consoleException.MatchString(t) {
		return 0
	}
	var msg []string
	j := r.scan(i+1, func(_ int, _, n string) lineRole {
		switch {
		case n == "" && len(msg) > 0:
			return endBefore
		case n != "":
			msg = append(msg, n)
		}
		return inBlock
	})
	lines := []string{t}
	if len(msg) > 0 {
		lines = append(lines, strings.Join(msg, " "))
	}
	r.add(Finding{Kind: Exception, Severity: Error, Lines: lines, key: strings.Join(lines, "\n")}, "")
	return j - i
}

// mayBeException is a cheap look for an exception's headline.
func mayBeException(t string) bool {
	for _, w := range []string{"Error", "Exception", "Throwable", "Failure", "Failed", "Panic", "Fault", "Interrupt", "Exit", "Warning"} {
		if strings.Contains(t, w) {
			return true
		}
	}
	return false
}

// mayBeMarked is a cheap look for a test's failure mark.
func mayBeMarked(t string) bool {
	return strings.HasPrefix(t, "✗") || strings.HasPrefix(t, "✕") || strings.HasPrefix(t, "×") || strings.HasPrefix(t, "✘") || strings.HasPrefix(t, "(fail)")
}

// startsWithDigitParen is a cheap look for "1) ".
func startsWithDigitParen(t string) bool {
	k := 0
	for k < len(t) && t[k] >= '0' && t[k] <= '9' {
		k++
	}
	return k > 0 && k+1 < len(t) && t[k] == ')' && t[k+1] == ' '
}

// present returns the lines that are not empty, in order: what a reader
// found of the parts a finding may have.
func present(lines ...string) []string {
	out := lines[:0:0]
	for _, l := range lines {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
