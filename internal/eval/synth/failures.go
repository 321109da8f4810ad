package synth

import (
	"fmt"
	"strings"
)

// failure is a failed tool output and the identifier in it that a compiled
// context should keep (a fact of kind error_code).
type failure struct {
	content string
	fact    string
}

// failureFor makes a failed output of tool about size characters long, for
// a call about subject (callArgs' subject: a path, a command kind, a URL
// path); the fact is an exact substring of the content.
func (w *world) failureFor(tool, subject string, size int) failure {
	r := w.r
	var options []func() failure
	switch tool {
	case "run_tests":
		options = []func() failure{w.appCodeTestFailure, w.panicFailure, w.compileFailure, w.sqlstateFailure, w.oomFailure, w.langExceptionFailure}
	case "shell":
		switch subject {
		case "kubectl":
			options = []func() failure{w.crashLoopFailure}
		case "git log", "git diff":
			options = []func() failure{w.gitRevisionFailure}
		case "git push":
			options = []func() failure{w.pushFailure}
		case "ls":
			options = []func() failure{w.lsFailure}
		default:
			options = []func() failure{w.makeFailure, w.oomFailure, w.diskFailure, w.compileFailure}
			if w.lang == "typescript" {
				options = append(options, w.npmFailure)
			}
		}
	case "http_get":
		path := subject
		if path == "" {
			path = w.endpoint()
		}
		options = []func() failure{func() failure { return w.httpStatusFailure(path) }, w.connRefusedFailure, w.connResetFailure, func() failure { return w.timeoutFailure(path) }, w.grpcFailure}
	case "run_sql":
		options = []func() failure{w.sqlstateFailure, w.sqlColumnFailure}
	case "read_file", "list_dir":
		options = []func() failure{w.enoentFailure}
	case "write_file", "apply_patch":
		options = []func() failure{w.patchFailure, w.enoentFailure}
	default:
		options = []func() failure{func() failure { return w.timeoutFailure(w.endpoint()) }, w.appCodeTestFailure}
	}
	f := pick(r, options)()
	if tool == "run_tests" && size > len(f.content)+200 {
		f.content = w.testLog(size-len(f.content), f.content)
	}
	return f
}

func (w *world) appCodeTestFailure() failure {
	r := w.r
	code := fmt.Sprintf("E%d", r.between(1001, 9899))
	msg := pick(r, []string{"insufficient stock", "ledger out of balance", "duplicate idempotency key", "cursor expired", "tenant quota exceeded", "stale version", "invalid state transition"})
	sym, test := w.symbol(), pick(r, w.tests)
	switch w.lang {
	case "go":
		file := strings.TrimSuffix(w.file(), ".go") + "_test.go"
		return failure{fmt.Sprintf("--- FAIL: %s (0.%02ds)\n    %s:%d: %s: %s %s (want nil)\n", test, r.IntN(99), file[strings.LastIndex(file, "/")+1:], r.between(20, 400), sym, code, msg), code}
	case "python":
		return failure{fmt.Sprintf("________________________ %s ________________________\n\n    def %s():\n>       assert result.ok, result.error\nE       AssertionError: %s: %s %s\nE       assert False\n\ntests/test_%s.py:%d: AssertionError\n", test, test, sym, code, msg, w.noun(), r.between(10, 300)), code}
	default:
		return failure{fmt.Sprintf(" ✗ %s\n   → expected { ok: true } but got { ok: false, code: '%s', message: '%s' }\n     at %s:%d:%d\n", test, code, msg, w.file(), r.between(10, 300), r.between(3, 40)), code}
	}
}

func (w *world) panicFailure() failure {
	r := w.r
	switch w.lang {
	case "go":
		msg := pick(r, []string{
			fmt.Sprintf("runtime error: index out of range [%d] with length %[1]d", r.between(1, 64)),
			"runtime error: invalid memory address or nil pointer dereference",
			fmt.Sprintf("assignment to entry in nil map in %s", w.symbol()),
			"sync: negative WaitGroup counter",
		})
		var b strings.Builder
		fmt.Fprintf(&b, "panic: %s [recovered]\n\tpanic: %[1]s\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x%s]\n\ngoroutine %d [running]:\n", msg, r.hex(6), r.between(7, 300))
		for i := 0; i < r.between(4, 9); i++ {
			fmt.Fprintf(&b, "%s/%s.(*%s).%s(...)\n\t/workspace/%s/%s:%d +0x%s\n", w.module, w.pkg(), w.typ(), w.symbol(), w.project, w.file(), r.between(10, 800), r.hex(3))
		}
		fmt.Fprintf(&b, "FAIL\t%s/%s\t%.3fs\n", w.module, w.pkg(), float64(r.IntN(5000))/1000)
		return failure{b.String(), "panic: " + msg}
	case "python":
		key := snake(camel(w.noun())) + "_id"
		return failure{fmt.Sprintf("Traceback (most recent call last):\n  File \"/workspace/%s/%s\", line %d, in %s\n    row = payload[%q]\n          ~~~~~~~^^^^^^^^^^^\nKeyError: '%s'\n", w.project, w.file(), r.between(10, 500), w.symbol(), key, key), fmt.Sprintf("KeyError: '%s'", key)}
	default:
		prop := lowerFirst(camel(w.noun())) + "Id"
		return failure{fmt.Sprintf("TypeError: Cannot read properties of undefined (reading '%s')\n    at %s (%s:%d:%d)\n    at processTicksAndRejections (node:internal/process/task_queues:95:5)\n", prop, w.symbol(), w.file(), r.between(10, 400), r.between(2, 60)), fmt.Sprintf("TypeError: Cannot read properties of undefined (reading '%s')", prop)}
	}
}

func (w *world) compileFailure() failure {
	r := w.r
	switch w.lang {
	case "go":
		f := w.file()
		line := fmt.Sprintf("%s:%d:%d: %s", f, r.between(10, 600), r.between(2, 40), pick(r, []string{
			"undefined: " + w.symbol(),
			fmt.Sprintf("cannot use %s (variable of type string) as int value in argument to %s", lowerFirst(camel(w.noun())), w.symbol()),
			fmt.Sprintf("too many arguments in call to %s", w.symbol()),
			fmt.Sprintf("%s declared and not used", lowerFirst(camel(w.noun()))+"ID"),
		}))
		return failure{fmt.Sprintf("# %s/%s\n%s\nexit status 1\n", w.module, w.pkg(), line), line}
	case "python":
		mod := pick(r, []string{"pydantic_settings", "tenacity", "orjson", "structlog", "httpx", "freezegun"})
		return failure{fmt.Sprintf("ImportError while loading conftest '/workspace/%s/tests/conftest.py'.\ntests/conftest.py:4: in <module>\n    from %s.config import settings\n%s/config.py:2: in <module>\n    import %s\nE   ModuleNotFoundError: No module named '%[4]s'\n", w.project, w.module, w.module, mod), fmt.Sprintf("ModuleNotFoundError: No module named '%s'", mod)}
	default:
		code := fmt.Sprintf("TS%d", pick(r, []int{2339, 2345, 2322, 2554, 2769, 7006, 2532}))
		return failure{fmt.Sprintf("%s:%d:%d - error %s: %s\n\nFound 1 error in %[1]s:%[2]d\n", w.file(), r.between(5, 400), r.between(3, 50), code, pick(r, []string{"Property 'tenantId' does not exist on type 'Request'.", "Argument of type 'string' is not assignable to parameter of type 'number'.", "Object is possibly 'undefined'."})), code}
	}
}

func (w *world) sqlstateFailure() failure {
	r := w.r
	state := pick(r, []string{"23505", "40001", "40P01", "23503", "57014", "55P03"})
	msg := map[string]string{
		"23505": fmt.Sprintf("duplicate key value violates unique constraint \"%s_idempotency_key_key\"", w.table()),
		"40001": "could not serialize access due to concurrent update",
		"40P01": "deadlock detected",
		"23503": fmt.Sprintf("insert or update on table \"%s\" violates foreign key constraint \"%s_%s_id_fkey\"", w.table(), w.table(), w.noun()),
		"57014": "canceling statement due to statement timeout",
		"55P03": fmt.Sprintf("could not obtain lock on row in relation \"%s\"", w.table()),
	}[state]
	code := "SQLSTATE " + state
	return failure{fmt.Sprintf("ERROR: %s (%s)\n    at %s (%s:%d)\n", msg, code, w.symbol(), w.file(), r.between(10, 500)), code}
}

func (w *world) sqlColumnFailure() failure {
	r := w.r
	col := snake(camel(w.noun())) + pick(r, []string{"_ref", "_key", "_version"})
	return failure{fmt.Sprintf("ERROR:  column \"%s\" does not exist\nLINE 1: SELECT id, %[1]s FROM %s WHERE ...\n                   ^\nSQLSTATE 42703\n", col, w.table()), fmt.Sprintf("column \"%s\" does not exist", col)}
}

func (w *world) oomFailure() failure {
	r := w.r
	return failure{fmt.Sprintf("%s\nsignal: killed\nFAIL\t%s/%s\t%d.%03ds\n%s\nexit status 137\n", strings.Repeat(fmt.Sprintf("=== RUN   %s\n", pick(r, w.tests)), r.between(1, 4)), w.module, w.pkg(), r.between(20, 300), r.IntN(999), pick(r, []string{"Killed (OOMKilled: memory limit 512Mi)", "process exceeded its memory limit"})), "exit status 137"}
}

func (w *world) langExceptionFailure() failure {
	r := w.r
	exc := pick(r, []string{"IntegrityError", "StaleDataError", "ValidationError", "TimeoutError", "ConcurrencyError"})
	name := camel(w.noun()) + exc
	return failure{fmt.Sprintf("%s: %s rejected the write for tenant t_%s\n    at %s (%s:%d)\n", name, w.symbol(), r.hex(6), w.symbol(), w.file(), r.between(10, 400)), name}
}

func (w *world) makeFailure() failure {
	r := w.r
	target := pick(r, []string{"test", "lint", "build", "migrate", "generate"})
	fact := fmt.Sprintf("[Makefile:%d: %s] Error %d", r.between(12, 140), target, r.between(1, 2))
	return failure{fmt.Sprintf("%s\nmake: *** %s\n", w.buildLog(r.between(300, 1500)), fact), fact}
}

func (w *world) crashLoopFailure() failure {
	r := w.r
	pod := w.project + "-" + r.hex(10) + "-" + r.token(5, "abcdefghijklmnopqrstuvwxyz")
	return failure{fmt.Sprintf("NAME                                   READY   STATUS             RESTARTS   AGE\n%-38s 0/1     CrashLoopBackOff   %d          %dm\n\nWarning  BackOff  %ds (x%d over %dm)  kubelet  Back-off restarting failed container %s in pod %s\n", pod, r.between(3, 40), r.between(5, 90), r.between(5, 60), r.between(3, 40), r.between(5, 90), w.project, pod), "CrashLoopBackOff"}
}

func (w *world) npmFailure() failure {
	r := w.r
	code := pick(r, []string{"ERESOLVE", "EACCES", "ETARGET", "ELIFECYCLE"})
	return failure{fmt.Sprintf("npm ERR! code %s\nnpm ERR! %s\nnpm ERR! A complete log of this run can be found in: /root/.npm/_logs/2024-09-%02dT10_%02d_11_000Z-debug-0.log\n", code, pick(r, []string{"While resolving: " + w.module + "@" + w.version, "could not resolve dependency peer " + strings.ToLower(w.lib()) + "@^3", "Command failed: tsc -p ."}), r.between(1, 28), r.between(0, 59)), "npm ERR! code " + code}
}

func (w *world) pushFailure() failure {
	return failure{fmt.Sprintf("To github.com:%s/%s.git\n ! [rejected]        %s -> %[3]s (non-fast-forward)\nerror: failed to push some refs to 'github.com:%[1]s/%[2]s.git'\n", w.org, w.project, w.branch), fmt.Sprintf("! [rejected]        %s -> %[1]s (non-fast-forward)", w.branch)}
}

func (w *world) diskFailure() failure {
	r := w.r
	return failure{fmt.Sprintf("failed to register layer: write /var/lib/docker/overlay2/%s/diff/usr/lib/libicu.so.72: no space left on device (ENOSPC)\n", r.hex(64)), "no space left on device (ENOSPC)"}
}

// httpErrors pair a status with the application error codes and messages
// that come with it.
var httpErrors = []struct {
	status   string
	codes    []string
	messages []string
}{
	{"503 Service Unavailable", []string{"ERR_CIRCUIT_OPEN", "ERR_POOL_EXHAUSTED", "ERR_MAINTENANCE"}, []string{"upstream unavailable", "connection pool exhausted", "try again later"}},
	{"502 Bad Gateway", []string{"ERR_UPSTREAM_BAD_RESPONSE", "ERR_UPSTREAM_RESET"}, []string{"upstream sent an invalid response", "upstream closed the connection"}},
	{"429 Too Many Requests", []string{"ERR_RATE_LIMITED", "ERR_QUOTA_EXCEEDED"}, []string{"too many requests", "tenant quota exceeded"}},
	{"500 Internal Server Error", []string{"ERR_INTERNAL", "ERR_UNHANDLED"}, []string{"internal error", "unexpected error"}},
	{"504 Gateway Timeout", []string{"ERR_UPSTREAM_TIMEOUT", "ERR_DEADLINE"}, []string{"upstream did not answer in time", "deadline exceeded"}},
	{"409 Conflict", []string{"ERR_VERSION_CONFLICT", "ERR_DUPLICATE"}, []string{"version conflict", "already exists"}},
}

func (w *world) httpStatusFailure(path string) failure {
	r := w.r
	e := pick(r, httpErrors)
	code := "HTTP " + e.status[:3]
	appCode := pick(r, e.codes)
	body := fmt.Sprintf("{\"error\": {\"code\": \"%s\", \"message\": \"%s\", \"request_id\": \"req_%s\"}}", appCode, pick(r, e.messages), r.token(16, alnum))
	fact := code
	if r.chance(0.5) {
		fact = appCode
	}
	return failure{fmt.Sprintf("request to %s failed: %s %s\nretry-after: %d\n\n%s\n", path, code, e.status[4:], r.between(1, 60), body), fact}
}

func (w *world) gitRevisionFailure() failure {
	ref := pick(w.r, []string{"origin/main", "main", "release/" + w.version, w.branch + "~3"})
	fact := fmt.Sprintf("ambiguous argument '%s'", ref)
	return failure{"fatal: " + fact + ": unknown revision or path not in the working tree.\nUse '--' to separate paths from revisions, like this:\n'git <command> [<revision>...] -- [<file>...]'\n", fact}
}

func (w *world) lsFailure() failure {
	dir := w.pkg() + pick(w.r, []string{"/legacy", "/v2", "/internal", "/gen"})
	fact := fmt.Sprintf("cannot access '%s'", dir)
	return failure{"ls: " + fact + ": No such file or directory\n", fact}
}

func (w *world) connRefusedFailure() failure {
	r := w.r
	addr := fmt.Sprintf("%s:%d", w.host(), pick(r, []int{5432, 6379, 9092, 8080, 4222}))
	if w.lang == "typescript" {
		return failure{fmt.Sprintf("Error: connect ECONNREFUSED %s\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16) {\n  errno: -111,\n  code: 'ECONNREFUSED',\n  syscall: 'connect'\n}\n", addr), "ECONNREFUSED " + addr}
	}
	return failure{fmt.Sprintf("dial tcp %s: connect: connection refused\n", addr), fmt.Sprintf("dial tcp %s: connect: connection refused", addr)}
}

func (w *world) connResetFailure() failure {
	r := w.r
	return failure{fmt.Sprintf("upstream %s closed the connection\n{\"error\": \"ERR_CONN_RESET\", \"attempt\": %d, \"elapsed_ms\": %d}\n", w.service(), r.between(1, 5), r.between(30, 9000)), "ERR_CONN_RESET"}
}

func (w *world) timeoutFailure(path string) failure {
	r := w.r
	return failure{fmt.Sprintf("Get \"https://staging.%s.internal%s\": context deadline exceeded (Client.Timeout exceeded while awaiting headers) after %ds\n", w.project, path, r.between(5, 60)), "Client.Timeout exceeded while awaiting headers"}
}

func (w *world) grpcFailure() failure {
	r := w.r
	code := pick(r, []string{"Unavailable", "DeadlineExceeded", "ResourceExhausted", "FailedPrecondition"})
	return failure{fmt.Sprintf("rpc error: code = %s desc = %s\n", code, pick(r, []string{"connection error: desc = \"transport: Error while dialing\"", "received message larger than max (5242880 vs. 4194304)", "stream terminated by RST_STREAM"})), "rpc error: code = " + code}
}

// enoentFailure is a missing file, in the words of the tool harness (which
// speaks the project's language here).
func (w *world) enoentFailure() failure {
	path := strings.TrimSuffix(w.file(), w.ext()) + pick(w.r, []string{"_v2", "_legacy", "_old", "_gen"}) + w.ext()
	switch w.lang {
	case "go":
		fact := fmt.Sprintf("open %s: no such file or directory", path)
		return failure{fact + "\n", fact}
	case "python":
		fact := fmt.Sprintf("FileNotFoundError: [Errno 2] No such file or directory: '%s'", path)
		return failure{"Traceback (most recent call last):\n  File \"/opt/agent/tools/fs.py\", line 41, in read_file\n    with open(path, encoding=\"utf-8\") as f:\n" + fact + "\n", fact}
	}
	return failure{fmt.Sprintf("Error: ENOENT: no such file or directory, open '%s'\n", path), fmt.Sprintf("ENOENT: no such file or directory, open '%s'", path)}
}

func (w *world) patchFailure() failure {
	r := w.r
	f := w.file()
	fact := fmt.Sprintf("patch failed: %s:%d", f, r.between(10, 700))
	return failure{fmt.Sprintf("error: %s\nerror: %s: patch does not apply\nhunk #%d FAILED\n", fact, f, r.between(1, 5)), fact}
}
