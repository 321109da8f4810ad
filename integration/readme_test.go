//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/docset"
	"github.com/contextcompiler/ctxc/internal/testtools"
)

// readmeAddr and readmeHTTPAddr are the gRPC and HTTP addresses the README's commands use.
const (
	readmeAddr     = "127.0.0.1:50051"
	readmeHTTPAddr = "127.0.0.1:8080"
)

// readmeBlock is one fenced code block of the README.
type readmeBlock struct {
	lang  string // what follows the opening ```: "sh", "yaml", ""
	line  int    // of the opening fence
	lines []string
	// evalBlock: inside a guide's eval block (<!-- ctxc eval NAME -->),
	// whose command cmd/ctxc's TestGuideEvalBlocks runs and whose figures it
	// compares with what the command prints.
	evalBlock bool
}

// readme is README.md split into its fenced code blocks and its text: the
// lines outside the blocks, joined by newlines, but for the sections whose
// figures are checked apart (readmeSectionsCheckedApart).
type readme struct {
	doc    *docset.Doc
	blocks []readmeBlock
	prose  string
	// proseLines maps a prose line to its line in doc.Text (r.doc.Where
	// names its file and line).
	proseLines []int
	// performance is the Performance section's text.
	performance string
}

// readmeSectionsCheckedApart are the README's sections whose numbers are not
// answers of the README's commands, and what checks them instead.
var readmeSectionsCheckedApart = map[string]string{
	"## Installing a release": "integration/dist_test.go (make test-dist) does each step on the artifacts of make dist, " +
		"and client/version_test.go checks the versions",
	"## What it keeps": "cmd/ctxc's TestReadmeEvalTableMatches compares the session line and the table with what ctxc eval " +
		"prints, as it does the same table in Measuring long sessions",
	"## The context inspector": "integration/inspector_test.go drives the page in Chromium and checks what it shows against " +
		"the server's answers; the draw and compile times are what that test measured and logged, which no test asserts",
	"## Performance": "measurements: the binary size against scripts/measure.sh (checkBinarySize); " +
		"the benchmark and start-up figures are wall-clock times, which no test asserts",
	"## Measuring long sessions": "cmd/ctxc's TestReadmeEvalTableMatches compares the session line and the table " +
		"with what ctxc eval prints, and TestReadmeTranscriptFigures the recorded transcripts' blocks",
	"## Client libraries": "the packages' requirements are their manifests' (client/version_test.go checks their versions); " +
		"the side-by-side figures are what `make bench-clients` measured (times, and what each call keeps, which " +
		"moves with the compaction policies); no test asserts them",
	"## Running it safely": "cmd/ctxc's TestReadmeLimitsTable compares the limits table, the token length and the retry hint " +
		"with the code; TestReadmeSharedServiceConfigLoads loads its configuration; the behaviour it describes is " +
		"tested through the binary (security_test.go, hardening_test.go, connections_test.go)",
	"## Agent CLIs through ctxc": "integration/wrap_test.go runs each CLI through ctxc wrap and compares the windows table " +
		"with what ctxc refused below it (TestWrapAgentCLIs) and with the versions package.json pins and the test's windows " +
		"(TestWrapWindowsTable); internal/agentcli's tests compare the configuration by hand with what ctxc wrap applies",
	"## Deploying": "deploy/ (make test-deploy) renders, lints and strictly decodes the chart and the sidecar manifest; " +
		"TestReplicasBehaveAsOneService and TestSidecarAgentExample run what it describes; TestReadmeDeploying checks its " +
		"service config and nginx configuration against the ones the tests use; the sizing figures are what " +
		"make bench-sizing measured, wall-clock rates no test asserts",
	"## Metrics, dashboard and alerts": "TestMetricsThroughTheBinary compares the metrics table, the reason classes and " +
		"the dashboard's panels with a real server's scrape and deploy/; TestReadmeRunbooks the alerts' thresholds with the rules",
}

func readReadme(t *testing.T) *readme {
	t.Helper()
	doc, err := docset.Read(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	r := &readme{doc: doc}
	var block *readmeBlock
	var prose, perf []string
	inPerf, apart, inEval := false, false, false
	sc := bufio.NewScanner(strings.NewReader(doc.Text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if block != nil {
			if line == "```" {
				r.blocks = append(r.blocks, *block)
				block = nil
			} else {
				block.lines = append(block.lines, line)
			}
			continue
		}
		if strings.HasPrefix(line, "```") {
			block = &readmeBlock{lang: strings.TrimPrefix(line, "```"), line: n, evalBlock: inEval}
			continue
		}
		switch {
		case docset.EvalEnds(line):
			inEval = false
		default:
			if _, ok := docset.EvalBegins(line); ok {
				inEval = true
			}
		}
		if strings.HasPrefix(line, "## ") {
			_, apart = readmeSectionsCheckedApart[line]
			inPerf = line == "## Performance"
		}
		if inPerf {
			perf = append(perf, line)
		}
		if apart {
			continue
		}
		prose = append(prose, line)
		r.proseLines = append(r.proseLines, n)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	r.prose, r.performance = strings.Join(prose, "\n"), strings.Join(perf, "\n")
	return r
}

// commands returns the non-empty lines of the ```sh blocks.
func (r *readme) commands() []string {
	return r.commandsOf(func(readmeBlock) bool { return true })
}

// commandsOf is the commands of the ```sh blocks that keep accepts.
func (r *readme) commandsOf(keep func(readmeBlock) bool) []string {
	var cmds []string
	for _, b := range r.blocks {
		if b.lang != "sh" || !keep(b) {
			continue
		}
		for _, l := range b.lines {
			if l = strings.TrimSpace(l); l != "" {
				cmds = append(cmds, l)
			}
		}
	}
	return cmds
}

// blockAfter returns the first block that follows the prose passage, which
// must occur once.
func (r *readme) blockAfter(t *testing.T, passage string) readmeBlock {
	t.Helper()
	i := strings.Index(r.prose, passage)
	if i < 0 || strings.Count(r.prose, passage) != 1 {
		t.Fatalf("the documentation has %d passages %q, want one", strings.Count(r.prose, passage), passage)
	}
	line := r.proseLines[strings.Count(r.prose[:i], "\n")]
	for _, b := range r.blocks {
		if b.line > line {
			return b
		}
	}
	t.Fatalf("no code block after %q", passage)
	return readmeBlock{}
}

// readmeAnswer is what one README command printed.
type readmeAnswer struct {
	command        string
	stdout, stderr []byte
}

// TestReadmeCommands runs every command of the README's ```sh blocks as a
// user would, from the repository root, in a shell whose PATH has nothing
// of the repository's (as a fresh one: `make test` puts ./bin on its own):
// the server with the guides' serve command first, then each grpcurl, curl,
// ./bin/ctxc, Python and PHP command against it in order, exactly as
// written but for the addresses (the system picks the ports) and ./bin/ctxc
// (this run's `make build`, at a path of its own); `make` commands are
// checked with `make -n`, and `make demo` must run that same serve command.
// A grpcurl command ending in "# fails with CODE" must fail with that gRPC
// code; a curl command ending in "# fails with HTTP STATUS" with that
// status. Then every number the README's text quotes is compared with these
// answers (readmeQuotes).
func TestReadmeCommands(t *testing.T) {
	// The commands run ./bin/grpcurl, as `make grpcurl` builds it.
	if _, err := os.Stat(filepath.Join(repoRoot, "bin", "grpcurl")); err != nil {
		testtools.Missing(t, "grpcurl not found at ./bin/grpcurl, where the README's commands run it from", "make grpcurl")
	}
	r := readReadme(t)
	cmds := r.commands()
	if len(cmds) < 10 {
		t.Fatalf("found only %d commands in the documentation's ```sh blocks", len(cmds))
	}
	checkOneServerPerBlock(t, r)
	var serveArgs string
	for _, c := range cmds {
		if args, ok := strings.CutPrefix(c, "./bin/ctxc serve"); ok {
			serveArgs = args
			break
		}
	}
	if serveArgs == "" {
		t.Fatal("the README has no ./bin/ctxc serve command to start the server with")
	}
	env := freshShellEnv()
	// The HTTP port too is picked by the system; the server logs which.
	s := startServer(t, strings.Fields(strings.ReplaceAll(serveArgs, readmeHTTPAddr, "127.0.0.1:0"))...)
	httpAddr := s.httpAddr(t)
	// The session commands chain their answers through /tmp files; each test
	// run gets its own directory instead.
	scratch := t.TempDir()

	// The eval blocks' commands (a second or so each) are cmd/ctxc's
	// TestGuideEvalBlocks' to run: it compares what they print with the
	// block, which this test cannot.
	evalRun := len(r.commandsOf(func(b readmeBlock) bool { return b.evalBlock }))
	answers := map[string]*readmeAnswer{}
	for _, line := range r.commandsOf(func(b readmeBlock) bool { return !b.evalBlock }) {
		if strings.HasPrefix(line, "./bin/ctxc serve") {
			continue
		}
		t.Run(line, func(t *testing.T) {
			command, expectFailure, _ := strings.Cut(line, "# fails with ")
			command = strings.TrimSpace(command)
			isCurl, isJSON := false, false
			switch {
			case strings.HasPrefix(command, "make "):
				// `make test` and `make run` cannot run inside the tests: a dry
				// run checks that the target exists and what it needs resolves.
				command = "make -n " + strings.TrimPrefix(command, "make ")
			case command == ".ci/run" || strings.HasPrefix(command, ".ci/run "):
				if info, err := os.Stat(filepath.Join(repoRoot, ".ci", "run")); err != nil || info.Mode()&0o111 == 0 {
					t.Fatalf(".ci/run is not an executable file: %v", err)
				}
				return
			case strings.HasPrefix(command, "grpcurl ") || strings.Contains(command, "| grpcurl "):
				t.Fatalf("%q runs grpcurl from PATH, where a fresh shell has none: run it as ./bin/grpcurl, where make grpcurl builds it", line)
			case strings.HasPrefix(command, "./bin/grpcurl "):
				isJSON = strings.Contains(command, "ctxc.v1.") && !strings.Contains(command, " describe ") && !strings.Contains(command, " > ")
			case strings.HasPrefix(command, "./bin/ctxc "):
				command = ctxcBinary + strings.TrimPrefix(command, "./bin/ctxc")
			case strings.HasPrefix(command, "jq ") && strings.Contains(command, "| ./bin/grpcurl "):
				isJSON = !strings.Contains(command, " > ")
			case strings.HasPrefix(command, "curl ") || strings.HasPrefix(command, "jq ") && strings.Contains(command, "| curl "):
				needCurl(t)
				isCurl, isJSON = true, true
			case strings.HasPrefix(command, "PYTHONPATH=clients/python/src /usr/bin/python3 "):
				// The command exactly as documented: Debian's interpreter and
				// the Python package's committed stubs.
				if _, err := os.Stat(filepath.Join(repoRoot, "clients", "python", "src", "ctxc", "v1", "compiler_service_pb2_grpc.py")); err != nil {
					testtools.Missing(t, "Python stubs missing", "make python-stubs")
				}
			case strings.HasPrefix(command, "php "):
				needProgram(t, "php", "make deps")
			default:
				t.Fatalf("README command %q is not one this test knows how to run; teach it", line)
			}
			command = strings.ReplaceAll(command, readmeAddr, s.addr)
			command = strings.ReplaceAll(command, readmeHTTPAddr, httpAddr)
			command = strings.ReplaceAll(command, "/tmp/ctxc-session-", scratch+"/ctxc-session-")
			cmd := exec.Command("bash", "-o", "pipefail", "-c", command)
			cmd.Dir, cmd.Env = repoRoot, env
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			out := stdout.String() + stderr.String()
			answers[line] = &readmeAnswer{command: line, stdout: stdout.Bytes(), stderr: stderr.Bytes()}
			if httpStatus, ok := strings.CutPrefix(strings.TrimSpace(expectFailure), "HTTP "); ok && isCurl {
				// curl --fail-with-body prints the JSON status, then its own error naming the HTTP status.
				if err == nil || !strings.Contains(out, `"code":`) || !strings.Contains(out, "returned error: "+httpStatus) {
					t.Fatalf("want HTTP %s with a JSON status, got err=%v:\n%s", httpStatus, err, out)
				}
				return
			}
			if expectFailure != "" {
				if err == nil || !strings.Contains(out, "Code: "+strings.TrimSpace(expectFailure)) {
					t.Fatalf("want failure %s, got err=%v:\n%s", expectFailure, err, out)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v:\n%s", err, out)
			}
			if command == "make -n demo" {
				checkDemoServes(t, stdout.String(), serveArgs)
			}
			if isJSON {
				var v map[string]any
				if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
					t.Fatalf("not JSON: %v\n%s", err, out)
				}
			}
		})
	}
	if evalRun == 0 {
		t.Error("no command is inside an eval block (<!-- ctxc eval NAME -->): the guides have them, so the markers were not read")
	}
	t.Logf("%d commands of eval blocks left to cmd/ctxc's TestGuideEvalBlocks", evalRun)
	if !t.Failed() {
		t.Run("quoted numbers", func(t *testing.T) { checkReadmeQuotes(t, r, answers, httpAddr, scratch) })
	}
	s.waitServing(t)
}

// freshShellEnv is the test's environment with PATH as a fresh shell has
// it: without the repository's directories (`make test` exports ./bin on
// PATH, and a command that relied on it would pass here and fail for a
// reader).
func freshShellEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if path, ok := strings.CutPrefix(kv, "PATH="); ok {
			var keep []string
			for _, dir := range filepath.SplitList(path) {
				if abs, err := filepath.Abs(dir); err == nil && abs != repoRoot && !strings.HasPrefix(abs, repoRoot+string(filepath.Separator)) {
					keep = append(keep, dir)
				}
			}
			kv = "PATH=" + strings.Join(keep, string(filepath.ListSeparator))
		}
		env = append(env, kv)
	}
	return env
}

// startsServer reports whether a documented command starts a server on the
// documented ports.
func startsServer(command string) bool {
	return command == "make run" || command == "make demo" || strings.HasPrefix(command, "./bin/ctxc serve")
}

// checkOneServerPerBlock: a block of commands run in order starts at most
// one server; a second on the same ports fails with "bind: address already
// in use". Alternatives belong in the text.
func checkOneServerPerBlock(t *testing.T, r *readme) {
	t.Helper()
	for _, b := range r.blocks {
		if b.lang != "sh" {
			continue
		}
		var servers []string
		for _, l := range b.lines {
			if l = strings.TrimSpace(l); startsServer(l) {
				servers = append(servers, l)
			}
		}
		if len(servers) > 1 {
			t.Errorf("%s: the block starts %d servers on the same ports, one after the other (%q): say the alternatives in the text", r.doc.Where(b.line), len(servers), servers)
		}
	}
}

// checkDemoServes: `make demo` (its dry run printed out) runs the serve
// command the guides start the server with, on the README's address.
func checkDemoServes(t *testing.T, out, serveArgs string) {
	t.Helper()
	// Flags and their values, in any order.
	flags := func(args string) map[string]string {
		fields, m := strings.Fields(args), map[string]string{}
		for i := 0; i+1 < len(fields); i += 2 {
			m[fields[i]] = fields[i+1]
		}
		if len(fields)%2 != 0 {
			m[fields[len(fields)-1]] = ""
		}
		return m
	}
	want := flags("--listen " + readmeAddr + " " + serveArgs)
	for _, line := range strings.Split(out, "\n") {
		if _, args, ok := strings.Cut(line, "/ctxc serve "); ok {
			if diff := cmp.Diff(want, flags(args)); diff != "" {
				t.Errorf("make demo runs `ctxc serve %s`, not what the guides start the server with, `./bin/ctxc serve%s` on %s (-guides +make demo):\n%s", args, serveArgs, readmeAddr, diff)
			}
			return
		}
	}
	t.Errorf("make demo runs no ctxc serve:\n%s", out)
}
