package diagnose

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Status lines: what a client, server, database, installer or shell says
// when a command could not do its work.
var (
	httpStatus = later(`^(?:< )?HTTP/[\d.]+ (\d{3})\b`)
	// statusAny is statusRes in one expression: one pass over a line.
	statusAny = laterFunc(func() *regexp.Regexp {
		var srcs []string
		for _, re := range statusRes {
			// Each alternative is anchored at the line's start ("^a|^b"
			// as "a|b" under one "^"), so a miss fails at the first byte.
			for _, alt := range strings.Split(re.String(), "|^") {
				srcs = append(srcs, "(?:"+strings.TrimPrefix(alt, "^")+")")
			}
		}
		return regexp.MustCompile("^(?:" + strings.Join(srcs, "|") + ")")
	})
	statusRes = []*pattern{
		later(`^curl: \(\d+\) .+`),
		later(`^wget: .+|^ERROR \d{3}: .+`),
		later(`^Error from server(?: \(\w+\))?: .+`),
		later(`^The connection to the server .+ was refused.*`),
		later(`^Unable to connect to the server: .+`),
		later(`^error: (?:unable to|the server|error validating|error parsing|resource mapping|no objects|unknown|failed|couldn't|you must|the path|invalid|no matches|Unexpected).+`),
		later(`^SUMMARY: \w+Sanitizer: .+`),
		later(`^ESLint found too many warnings .*`),
		later(`^<(?:title|h1|h2)>.*\b[45]\d\d\b.*</(?:title|h1|h2)>|^<head><title>.*\b[45]\d\d\b.*`), // an error page
		later(`^(?:docker: )?Cannot connect to the Docker daemon .+`),
		later(`^[45]\d\d\s+https?://\S+$`),                       // curl -w '%{http_code} %{url}'
		later(`^(?:Parse|Runtime) error(?: near line \d+)?: .+`), // sqlite3
		later(`^(?:docker: )?Error response from daemon: .+`),
		later(`^ERROR: failed to (?:solve|build|read|receive).*`),
		later(`^Failed to dial target host .+|^Error invoking method .+|^Failed to (?:list|compute|process|resolve|parse) .+`),
		later(`^(?:ERROR|error) \d+ \([\w]{5}\)(?: at line \d+)?: .+`), // MySQL / MariaDB
		later(`^(?:Parse|Runtime) error(?: near line \d+)?: .+`),       // sqlite3
		later(`^Error: (?:near line \d+: |in prepare, |stepping, ).+`), // sqlite3
		later(`^CONFLICT \([\w/ -]+\): .+`),                            // git
		later(`^! \[(?:rejected|remote rejected)\] .+`),
		later(`^(?:fatal|error|warning): .+`),
		later(`^npm (?:ERR!|error) .+`),
		later(`^(?:yarn|pnpm) ERR.* .+|^ERR_PNPM_\w+ .+`),
		later(`^ERROR: (?:Could not|No matching|Cannot|Invalid|Package|Failed|Exception|pip|Command|Double requirement|Ignored|Requirement|ResolutionImpossible|Directory|File).*`),
		later(`^(?:error: externally-managed-environment|× .+)$`),
		later(`^(?:Your requirements could not be resolved|Could not find package|\[\w+\\[\w\\]+Exception\]).*`), // composer
		later(`^(?:-?bash|sh|zsh|dash|/bin/(?:ba)?sh|[\w./-]+\.sh)(?:: line \d+)?: .+`),
		later(`^[\w./-]+: (?:command not found|Permission denied|No such file or directory|not found|cannot execute.*|Is a directory|Operation not permitted)$`),
		later(`^make(?:\[\d+\])?: \*\*\* .+`),
		later(`^(?:\S+: )*(?:undefined reference to|multiple definition of|cannot find -l)\S*.+`), // the linker
		later(`^(?:\S+: )?(?:Segmentation fault|Bus error|Aborted|Killed|Illegal instruction|Floating point exception)(?: \(core dumped\))?$`),
		later(`^signal: (?:killed|segmentation fault|aborted).*`),
		later(`^OCI runtime .+|^Error: (?:failed|cannot|unable|no such|unknown|invalid|the|could not|Could not).+`),
		later(`^(?:ERROR|FATAL|CRITICAL|Error|Fatal|error|fatal)\s*(?:\[[\w.-]+\])?:\s+\S.+`),
		later(`^(?:PHP )?(?:Fatal error|Parse error|Warning|Notice|Deprecated|Catchable fatal error):\s+.+`),
		later(`^Exception: .+`),
		later(`^(?:exit status|exit code|Exit code:?|exited with code) (?:129|13\d|14\d|15\d)$`),
	}
)

// statusLine reads a client's or a tool's error line. t is the whole line,
// rest the line without a tool's prefix.
func statusLine(t, rest string) (Finding, bool) {
	if m := httpStatus.FindStringSubmatch(rest); m != nil {
		code, _ := strconv.Atoi(m[1])
		if code >= 400 {
			return Finding{Kind: Status, Severity: Error, Lines: []string{t}, key: t}, true
		}
		return Finding{}, false
	}
	if jsonErrorBody.MatchString(rest) {
		return Finding{Kind: Status, Severity: Error, Lines: []string{t}, key: t}, true
	}
	if saysStatus(rest) && !CodeLike(rest) {
		return Finding{Kind: Status, Severity: Error, Lines: []string{t}, key: t}, true
	}
	if m := toolLine.FindStringSubmatch(rest); m != nil && !notTools[m[1]] && errorScore(m[2]) >= 2 && !CodeLike(m[2]) {
		// "gzip: stdin: not in gzip format": a tool saying why it stopped.
		return Finding{Kind: Status, Severity: Error, Lines: []string{t}, key: t}, true
	}
	if !statusAny.MatchString(rest) || CodeLike(rest) {
		return Finding{}, false
	}
	sev := Error
	for _, w := range []string{"warning: ", "PHP Warning", "Warning:", "PHP Notice", "Notice:", "PHP Deprecated", "Deprecated:"} {
		if strings.HasPrefix(rest, w) {
			sev = Warning
		}
	}
	return Finding{Kind: Status, Severity: sev, Lines: []string{t}, key: t}, true
}

// jsonErrorBody is an API's error body on one line: {"error": {"code": …,
// "message": …}}.
var jsonErrorBody = later(`^\{\s*"(?:error|errors|err|fault)"\s*:\s*[{"\[].*\}$`)

// toolLine is a line a program starts with its own name.
var toolLine = later(`^([a-z][\w+.-]{1,20}): (\S.*)$`)

// notTools open lines like a program's name but label a value.
var notTools = map[string]bool{"left": true, "right": true, "expected": true, "actual": true, "got": true, "want": true,
	"received": true, "note": true, "help": true, "hint": true, "info": true, "debug": true, "detail": true, "details": true,
	"message": true, "reason": true, "cause": true, "value": true, "key": true, "name": true, "type": true, "description": true,
	"status": true, "code": true, "id": true, "path": true, "url": true, "stack": true, "location": true, "summary": true,
	"warning": true, "error": true, "fatal": true, "see": true, "at": true, "in": true, "from": true, "to": true, "and": true}

// Exception headlines: a typed error and its message.
var exceptionRe = later(`^(?:Exception in thread "[^"]*" |Caused by: |Uncaught |\[cause\]: |=> |E\s+)?(?:[A-Za-z_$][\w$]*[.:]{1,2})*(?:[A-Z][\w$]*)?(?:Error|Exception|Throwable|Failure|Failed|Panic|Fault|Interrupt|Exit|Warning)(?: \[[A-Z_0-9]+\])?(?::(?:\s.*)?)?$`)

// exceptionLine reports whether a line is an exception's headline
// ("KeyError: 'sku'", "java.lang.IllegalStateException: closed",
// "TypeError: Cannot read properties of undefined (reading 'id')").
func exceptionLine(t string) bool {
	if !exceptionRe.MatchString(t) {
		return false
	}
	// "Error:" alone, or "ValidationError: a sentence" in prose: an
	// exception names its type in one word and has no spaces before the colon.
	head, _, _ := strings.Cut(t, ": ")
	if rest, ok := strings.CutPrefix(head, "E "); ok {
		head = strings.TrimSpace(rest) // pytest's "E   KeyError: 'x'"
	}
	return !strings.ContainsAny(strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(head, "Caused by"), "Exception in thread"), "Uncaught "), " ") ||
		strings.HasPrefix(t, "Exception in thread") || strings.HasPrefix(t, "Caused by: ") || strings.HasPrefix(t, "Uncaught ")
}

// errorScore ranks how plainly an unstructured line reports an error: 3 with
// an error code or errno, 2 with an error word, 1 with a word that may report
// one, 0 for none or a line that reports a success.
func errorScore(line string) int {
	lower := strings.ToLower(line)
	for _, m := range []string{"✓", "✔", "ok ", "ok\t", "pass ", "pass:", "passed", "success", "--- pass", "--- skip", "=== run", "=== pause", "=== cont"} {
		if strings.HasPrefix(lower, m) {
			return 0
		}
	}
	if strings.Contains(line, "::") && (strings.Contains(line, " PASSED") || strings.Contains(line, " SKIPPED") || strings.Contains(line, " XFAIL")) {
		return 0 // pytest -v's verdict on a test that did not fail, whatever its name says ("test_overflow")
	}
	if saysStatus(line) {
		return 3
	}
	ws := strings.FieldsFunc(line, func(r rune) bool { return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '\'') })
	score := 0
	for _, w := range ws {
		if errnoNames[w] || errorCode(w) {
			return 3
		}
		lw := strings.ToLower(w)
		if len(lw) > 5 && (strings.HasSuffix(lw, "error") || strings.HasSuffix(lw, "exception")) {
			score = max(score, 2) // a type name: ImportError, IOException
		}
		for _, stem := range errorStems {
			if strings.HasPrefix(lw, stem) {
				score = max(score, 2)
			}
		}
		for _, stem := range weakStems {
			if strings.HasPrefix(lw, stem) {
				score = max(score, 1)
			}
		}
	}
	if score < 2 {
		for _, p := range errorPhrases {
			if strings.Contains(lower, p) {
				return 2
			}
		}
	}
	return score
}

// saysStatus reports whether s holds a statusPhrase. Every one has a code
// of three digits and one of its words, which most lines lack; a line with
// other than ASCII goes to the expression, whose case folding knows more
// letters than containsFold does.
func saysStatus(s string) bool {
	if !hasDigits(s, 3) {
		return false
	}
	if isASCII(s) && !containsFold(s, "http") && !containsFold(s, "status") && !containsFold(s, "returned") &&
		!containsFold(s, "response code") && !containsFold(s, "exit ") {
		return false
	}
	return statusPhrase.MatchString(s)
}

// statusPhrase is an error status in words: "HTTP 503", "status code 429",
// "returned 404", "exit status 137".
var statusPhrase = later(`(?i)\b(?:HTTP(?:/[\d.]+)?|status(?: code)?|returned|response code)[ :=]+[45]\d\d\b|\bexit (?:status|code) (?:1[2-5]\d)\b`)

var (
	errorStems   = []string{"error", "fail", "panic", "exception", "denied", "refused", "timeout", "fatal", "crash", "killed", "unavailable", "unreachable", "forbidden", "unauthorized", "exceeded", "overflow", "segfault", "abort", "deadlock", "traceback", "violat", "corrupt"}
	weakStems    = []string{"invalid", "conflict", "cannot", "unable", "rejected", "undefined", "unexpected", "mismatch", "missing", "unknown"}
	errorPhrases = []string{"timed out", "not found", "no such", "does not exist", "doesn't exist", "out of range", "nil pointer", "no space", "out of memory", "connection reset", "not used", "can't "}
)

// errnoNames are POSIX errno names: "ECONNREFUSED" is an error, "EXPRESS" in
// a licence is not.
var errnoNames = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(`E2BIG EACCES EADDRINUSE EADDRNOTAVAIL EAFNOSUPPORT EAGAIN EALREADY EBADF EBADMSG EBUSY
		ECANCELED ECHILD ECONNABORTED ECONNREFUSED ECONNRESET EDEADLK EDESTADDRREQ EDOM EDQUOT EEXIST EFAULT EFBIG
		EHOSTDOWN EHOSTUNREACH EIDRM EILSEQ EINPROGRESS EINTR EINVAL EIO EISCONN EISDIR ELOOP EMFILE EMLINK EMSGSIZE
		ENAMETOOLONG ENETDOWN ENETRESET ENETUNREACH ENFILE ENOBUFS ENODATA ENODEV ENOENT ENOEXEC ENOLCK ENOLINK ENOMEM
		ENOMSG ENOPROTOOPT ENOSPC ENOSR ENOSTR ENOSYS ENOTCONN ENOTDIR ENOTEMPTY ENOTSOCK ENOTSUP ENOTTY ENXIO EOPNOTSUPP
		EOVERFLOW EPERM EPIPE EPROTO EPROTONOSUPPORT EPROTOTYPE ERANGE EROFS ESPIPE ESRCH ESTALE ETIME ETIMEDOUT ETXTBSY
		EWOULDBLOCK EXDEV EAI_AGAIN ENOTFOUND ERESOLVE ETARGET E404 EINTEGRITY ELIFECYCLE EBADENGINE`) {
		m[n] = true
	}
	return m
}()

// errorCode reports whether a word is an error code with a prefix and
// digits: E0308, TS2304, ORA-00942, SQLSTATE-like 23505 is not (no letter).
func errorCode(w string) bool {
	if len(w) < 4 || len(w) > 12 {
		return false
	}
	upper, digits := 0, 0
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c >= 'A' && c <= 'Z':
			if digits > 0 {
				return false
			}
			upper++
		case c >= '0' && c <= '9':
			digits++
		default:
			return false
		}
	}
	return upper >= 1 && upper <= 4 && digits >= 3
}

// indent is the width of a line's leading white space, a tab counted as 8.
func indent(l string) int {
	n := 0
	for _, r := range l {
		switch r {
		case ' ':
			n++
		case '\t':
			n += 8
		default:
			return n
		}
	}
	return n
}

func startsWithSpace(l string) bool {
	r, _ := utf8.DecodeRuneInString(l)
	return r == ' ' || r == '\t'
}

// reportStems start the words of a line that could report trouble; most
// lines of an output (source, listings, progress) hold none and skip the
// expressions (mayReport).
var reportStems = []string{"err", "fail", "fatal", "deni", "refus", "found", "such", "cannot", "can't", "unabl", "connect",
	"http", "curl", "wget", "npm", "yarn", "pnpm", "conflict", "reject", "kill", "fault", "abort", "signal", "warn",
	"exception", "undefin", "multipl", "summary", "eslint", "title", "permi", "director", "execut", "exit", "status",
	"return", "respons", "oci", "illegal", "floating", "traceback", "panic", "timed", "timeout", "invalid", "unknown",
	"missing", "segment", "bus", "deadlock", "unhandled", "uncaught", "violat", "exceed", "overflow", "corrupt", "unavail",
	"unreach", "forbid", "unauthor", "crash", "notice", "deprecat", "parse", "runtime", "retry", "lost", "leak", "stop",
	"rule", "need"}

// mayReport is a cheap look at whether a line could be a status line, an
// exception or an error: a word that starts like one of reportStems, a type
// name ending in Error or Exception, a program naming itself first ("gzip:
// …"), a JSON body, a git or curl marker.
func mayReport(t string) bool {
	if t == "" {
		return false
	}
	switch t[0] {
	case '{', '!', '<', '[':
		return true
	}
	if t[0] >= '0' && t[0] <= '9' || strings.Contains(t, "***") {
		return true // "503 http://…", "1) Test…", make's "*** …"
	}
	var buf [24]byte
	first := true
	for i := 0; i < len(t); {
		for i < len(t) && !isLetter(t[i]) {
			i++
		}
		j := i
		n := 0
		for j < len(t) && isLetter(t[j]) {
			if n < len(buf) {
				buf[n] = t[j] | 0x20
				n++
			}
			j++
		}
		if n == 0 {
			break
		}
		w := string(buf[:n])
		if first && j < len(t) && t[j] == ':' && t[0] >= 'a' && t[0] <= 'z' {
			return true // a program's name, then what it says
		}
		first = false
		for _, stem := range reportStems {
			if strings.HasPrefix(w, stem) {
				return true
			}
		}
		if strings.HasSuffix(w, "error") || strings.HasSuffix(w, "exception") {
			return true
		}
		i = j
	}
	return false
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
