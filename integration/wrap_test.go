//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/agentcli"
)

// wrapCase is one agent CLI run through `ctxc wrap` as its user would: a
// home of the user's own holding the CLI's configuration as they keep it,
// their environment, and the CLI's headless command line.
type wrapCase struct {
	cli *agentCLI
	// command is the program ctxc wrap is given (found on PATH); pkg
	// the npm package package.json installs it from.
	command, pkg string
	// window is --window: small enough that the task's third step
	// compacts the conversation.
	window int
	// upstreamFlag gives --upstream; without it the user's own
	// configuration (home or env) names the upstream.
	upstreamFlag bool
	// home is the user's configuration files, by path under the home,
	// given the scripted upstream's URL; env the user's variables.
	home func(upstream string) map[string]string
	env  func(upstream string) []string
	// args are the CLI's arguments for the prompt.
	args func(prompt, ws string) []string
	// answer is the final answer in what the CLI printed.
	answer func(stdout []byte) string
	// below is a window under what the CLI always sends, belowEnv what
	// the user sets for that run, and refused what the CLI shows of
	// ctxc's refusal there as it fails; nil: it shows nothing and exits 0.
	below    int
	belowEnv []string
	refused  *regexp.Regexp
}

// wrapSteps is the task every CLI runs through ctxc wrap: three shell calls
// of the long tasks' plan (each printing 1,500 to 6,000 tokens), then the
// answer.
const wrapSteps = 3

// noTelemetry is what every CLI's environment holds beside the user's
// keys: no update checks, telemetry or other traffic of the CLI's own.
var noTelemetry = []string{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
	"GEMINI_CLI_NO_RELAUNCH=true", "GEMINI_CLI_TRUST_WORKSPACE=true", "PI_OFFLINE=1", "PI_TELEMETRY=0", "PI_SKIP_VERSION_CHECK=1",
	"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
	"OPENCODE_DISABLE_SHARE=1"}

func wrapCases() []wrapCase {
	return []wrapCase{
		{
			cli: codexCLI, command: "codex", pkg: "@openai/codex", window: 16000, upstreamFlag: true,
			home: func(string) map[string]string {
				return map[string]string{".codex/config.toml": `model = "gpt-5.5"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[features]
apps = false
plugins = false
remote_plugin = false
plugin_sharing = false
`}
			},
			env: func(string) []string { return []string{"OPENAI_API_KEY=" + plantedKey} },
			args: func(prompt, _ string) []string {
				return []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", prompt}
			},
			answer:  func(stdout []byte) string { return strings.TrimSpace(string(stdout)) },
			below:   4000,
			refused: regexp.MustCompile(`Codex ran out of room in the model's context window`),
		},
		{
			// The user's gateway in ANTHROPIC_BASE_URL: the upstream.
			cli: claudeCLI, command: "claude", pkg: "@anthropic-ai/claude-code-linux-x64", window: 24000,
			home: func(string) map[string]string {
				return map[string]string{".claude/settings.json": `{"includeCoAuthoredBy": false, "permissions": {"allow": ["Bash"]}}` + "\n"}
			},
			env: func(up string) []string {
				return []string{"ANTHROPIC_API_KEY=" + plantedKey, "ANTHROPIC_BASE_URL=" + up}
			},
			args: func(prompt, _ string) []string {
				return []string{"-p", prompt, "--output-format", "json", "--allowedTools", "Bash"}
			},
			answer: claudeCLI.answer,
			// It reads the limit out of the message.
			below:   4000,
			refused: regexp.MustCompile(`"result":"Prompt is too long · the request is ~[0-9]+ tokens \(limit 3000\)`),
		},
		{
			// Signed in with Google: wrap selects the key instead.
			cli: geminiCLI, command: "gemini", pkg: "@google/gemini-cli", window: 24000, upstreamFlag: true,
			home: func(string) map[string]string {
				return map[string]string{".gemini/settings.json": `{
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "ide": {"enabled": false},
  "security": {"auth": {"selectedType": "oauth-personal"}}
}
`}
			},
			env: func(string) []string { return []string{"GEMINI_API_KEY=" + plantedKey} },
			args: func(prompt, _ string) []string {
				return []string{"-p", prompt, "--yolo", "-m", "gemini-2.5-flash", "--output-format", "json"}
			},
			answer:  geminiCLI.answer,
			below:   4000,
			refused: refusalMessage,
		},
		{
			// A model of modelProviders at a local server: the upstream.
			// wrap runs it without the proxy variables (it applies them to
			// loopback too), so the guard sees none of its own traffic.
			cli: qwenCLI, command: "qwen", pkg: "@qwen-code/qwen-code", window: 24000,
			home: func(up string) map[string]string {
				return map[string]string{".qwen/settings.json": `{
  "modelProviders": {"openai": [{"id": "gpt-4.1", "name": "gpt-4.1", "baseUrl": "` + up + `/v1", "envKey": "SCRIPTED_API_KEY"}]},
  "security": {"auth": {"selectedType": "openai"}},
  "model": {"name": "gpt-4.1"},
  "general": {"enableAutoUpdate": false},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "$version": 4
}
`}
			},
			env:     func(string) []string { return []string{"SCRIPTED_API_KEY=" + plantedKey} },
			args:    func(prompt, _ string) []string { return []string{"-p", prompt, "--yolo"} },
			answer:  func(stdout []byte) string { return string(stdout) },
			below:   4000,
			refused: refusalMessage,
		},
		{
			// A provider of opencode.json at a local server: the upstream.
			cli: openCodeCLI, command: "opencode", pkg: "opencode-linux-x64", window: 24000,
			home: func(up string) map[string]string {
				return map[string]string{".config/opencode/opencode.json": `{
  "$schema": "https://opencode.ai/config.json",
  "provider": {
    "scripted": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "Scripted",
      "options": {"baseURL": "` + up + `/v1", "apiKey": "{env:SCRIPTED_API_KEY}"},
      "models": {"gpt-4.1": {"name": "gpt-4.1", "limit": {"context": 1047576, "output": 4096}}}
    }
  },
  "model": "scripted/gpt-4.1",
  "autoupdate": false,
  "share": "disabled"
}
`}
			},
			env:    func(string) []string { return []string{"SCRIPTED_API_KEY=" + plantedKey} },
			args:   func(prompt, _ string) []string { return []string{"run", prompt} },
			answer: func(stdout []byte) string { return string(stdout) },
			// Refused, it compacts the conversation itself and sends it
			// again, without end, unless its compaction is off.
			below:    4000,
			belowEnv: []string{"OPENCODE_DISABLE_AUTOCOMPACT=1"},
			refused:  refusalMessage,
		},
		{
			// pi's built-in openai provider (Responses), --upstream.
			cli: piCLI, command: "pi", pkg: "@mariozechner/pi-coding-agent", window: 16000, upstreamFlag: true,
			home: func(string) map[string]string {
				return map[string]string{".pi/agent/settings.json": `{"defaultProvider": "openai", "defaultModel": "gpt-4.1", "enableInstallTelemetry": false}` + "\n"}
			},
			env: func(string) []string { return []string{"OPENAI_API_KEY=" + plantedKey} },
			args: func(prompt, _ string) []string {
				return []string{"-p", "--no-extensions", "--no-skills", "--no-prompt-templates", "--no-themes", prompt}
			},
			answer: func(stdout []byte) string { return strings.TrimSpace(string(stdout)) },
			// Refused, it compacts the conversation itself once and sends
			// it again; refused again, pi -p ends printing nothing.
			below: 1000,
		},
	}
}

// Qwen Code and opencode, which only ctxc wrap's tests run.
var (
	qwenCLI     = &agentCLI{name: "Qwen Code", short: "qwen", upstream: "openai", installed: "@qwen-code/qwen-code/cli.js"}
	openCodeCLI = &agentCLI{name: "opencode", short: "opencode", upstream: "openai", installed: "opencode-linux-x64/bin/opencode"}
)

// TestWrapAgentCLIs runs each supported agent CLI, from npm at the version
// package.json pins, through `ctxc wrap --window N -- <cli> <args>` on a
// short task against the scripted upstream: three shell calls, then the
// answer, in a window small enough that ctxc compacts the conversation
// before the end. The upstream is a model that thinks whenever a CLI asks
// it to, and refuses what the real API would refuse (newStrictUpstream).
// The CLI finishes (exit 0, its answer printed), every request the
// upstream received is valid for its provider (calls and results paired by
// id, roles in order) and none was refused: every signature it gave a CLI
// that thinks came back as given where the API wants it, and some did;
// some went rewritten, wrap prints
// its summary line with the proxy's figures, no connection leaves
// loopback, and the user's own configuration files are byte for byte
// and time for time as they were.
//
// Then the same task in a window below what the CLI always sends (its
// system prompt, tools and the prompt): ctxc refuses the call in the
// provider's error shape, the CLI shows the message and fails, and nothing
// of the agent's loop reaches the upstream. What the refusal says must be
// kept is the figure docs/agents.md quotes (wrapFixedTokens).
func TestWrapAgentCLIs(t *testing.T) {
	// The CLIs wait on their own start-up more than on the CPU.
	t.Parallel()
	for _, c := range wrapCases() {
		t.Run(c.command, func(t *testing.T) {
			t.Parallel()
			res := runWrap(t, c, c.window)
			t.Logf("%s: %s in %v; %d requests upstream, %d proxied (%d rewritten, %d compacted), %d refused by the strict upstream, %d signatures of its own back",
				c.command, res.summary, res.wall.Round(100*time.Millisecond), len(res.requests), len(res.calls), res.outcome("rewritten"), res.compacted(),
				len(res.strict.rejected), res.strict.verified)
			if res.err != nil {
				t.Fatalf("ctxc wrap %s: %v\nstdout:\n%s\nstderr:\n%s", c.command, res.err, lastLines(string(res.stdout), 20), lastLines(string(res.stderr), 30))
			}
			if got, want := c.answer(res.stdout), res.plan.Answers[0]; !strings.Contains(got, want) {
				t.Errorf("the CLI answered %q, want %q", got, want)
			}
			for i, r := range res.requests {
				if r.Invalid != "" {
					t.Errorf("request %d (%s) is one the provider would reject: %s", i, r.Endpoint, r.Invalid)
				}
			}
			if res.outcome("rewritten") == 0 || res.compacted() == 0 {
				t.Errorf("no call was rewritten and compacted in a %d-token window: %+v", c.window, res.calls)
			}
			if c.cli.thinks && res.strict.verified == 0 {
				t.Errorf("no request brought back a signature of the model's thinking: the CLI did not think, or nothing was checked")
			}
			// Every call went upstream, the rewritten ones as ctxc compiled them.
			if len(res.requests) != len(res.calls) || res.outcome("refused") > 0 {
				t.Errorf("the upstream received %d requests of the %d calls ctxc logged: %+v", len(res.requests), len(res.calls), res.calls)
			}
			checkWrapSummary(t, res)

			below := runWrapEnv(t, c, c.below, c.belowEnv)
			needed := checkWrapRefusal(t, c, below)
			t.Logf("%s in a %d-token window: refused in %v, must keep %d tokens", c.command, c.below, below.wall.Round(100*time.Millisecond), needed)
			// What it always sends moves with the workspace's path and the
			// date it describes, by a few tokens, and with where the CLI is
			// installed when its prompt names its own files (pi names its
			// documentation's paths under this repository's node_modules): a
			// clone at a longer path sends more.
			row := agentsWindowsTable(t)[c.cli.name]
			slack := needed / 50
			if root, err := filepath.Abs(".."); err == nil && len(res.requests) > 0 {
				slack += strings.Count(string(res.requests[0].Body), root) * len(root) / 2
			}
			if diff := row.sends - needed; needed > 0 && (diff > slack || -diff > slack) {
				t.Errorf("docs/agents.md says %s always sends %d tokens; ctxc refused %d as what must be kept (more than %d apart: 2%%, and its install path's share): update the table",
					c.cli.name, row.sends, needed, slack)
			}
		})
	}
}

// refusalMessage is ctxc's refusal of a context that cannot fit, as the
// CLIs print it: the provider's message, with what must be kept.
var refusalMessage = regexp.MustCompile(`prompt is too long: ([0-9]+) tokens > ([0-9]+) maximum \(ctxc: [^)]*\)`)

// checkWrapRefusal: below what the CLI always sends, ctxc refuses its
// calls as too long (CONTEXT_IRREDUCIBLE, 400) in the provider's shape, the
// CLI shows it (c.refused) and fails, and no request of its loop goes
// upstream. It returns the tokens the refusal says must be kept.
func checkWrapRefusal(t *testing.T, c wrapCase, res *wrapResult) int {
	t.Helper()
	out := string(res.stdout) + string(res.stderr)
	switch {
	case c.refused == nil && (res.err != nil || strings.TrimSpace(string(res.stdout)) != ""):
		t.Errorf("in a %d-token window the CLI ended with %v, printing %q; want nothing and exit 0", c.below, res.err, lastLines(string(res.stdout), 5))
	case c.refused != nil && res.err == nil:
		t.Errorf("in a %d-token window the CLI exited 0:\n%s", c.below, lastLines(out, 20))
	case c.refused != nil && !c.refused.MatchString(out):
		t.Errorf("the CLI did not show ctxc's refusal (%s):\n%s", c.refused, lastLines(out, 20))
	}
	// The first call refused is the agent's first; a CLI that retries
	// sends another body.
	needed, shown := 0, map[int]bool{}
	for _, call := range res.calls {
		if call.Outcome != "refused" {
			continue
		}
		if call.Reason != "CONTEXT_IRREDUCIBLE" || call.Status != 400 || call.Needed <= call.Available || call.Available >= c.below {
			t.Errorf("refused with %d %s (%d tokens needed, %d available), want 400 CONTEXT_IRREDUCIBLE, needing more than the window leaves",
				call.Status, call.Reason, call.Needed, call.Available)
		}
		if needed == 0 {
			needed = call.Needed
		}
		shown[call.Needed] = true
	}
	if needed == 0 {
		t.Errorf("in a %d-token window ctxc refused no call: %+v", c.below, res.calls)
	}
	for i, r := range res.requests {
		if findShellTool(r.Body) != nil {
			t.Errorf("request %d of the agent's loop reached the upstream in a %d-token window", i, c.below)
		}
	}
	if m := refusalMessage.FindStringSubmatch(out); m != nil {
		if n, _ := strconv.Atoi(m[1]); !shown[n] {
			t.Errorf("the CLI shows %s tokens needed; ctxc refused calls needing %v", m[1], shown)
		}
	}
	return needed
}

// wrapResult is what one `ctxc wrap` run left.
type wrapResult struct {
	plan           *longTaskPlan
	err            error
	stdout, stderr []byte
	wall           time.Duration
	// summary is wrap's last line; calls the proxy's log lines (--log).
	summary  string
	calls    []wrapCall
	requests []upstreamRequest
	// strict is what the strict upstream refused and verified.
	strict strictness
}

// wrapCall is a "proxied" line of ctxc wrap's --log.
type wrapCall struct {
	proxied
	Needed    int `json:"needed_tokens"`
	Available int `json:"available_tokens"`
}

func (r *wrapResult) outcome(o string) int {
	n := 0
	for _, c := range r.calls {
		if c.Outcome == o {
			n++
		}
	}
	return n
}

func (r *wrapResult) compacted() int {
	n := 0
	for _, c := range r.calls {
		if c.Compacted {
			n++
		}
	}
	return n
}

// runWrap runs a case's task through ctxc wrap in window, and checks what
// every run must leave: no network tried, the user's files untouched.
func runWrap(t *testing.T, c wrapCase, window int) *wrapResult {
	return runWrapEnv(t, c, window, nil)
}

// runWrapEnv is runWrap with more of the user's variables.
func runWrapEnv(t *testing.T, c wrapCase, window int, more []string) *wrapResult {
	t.Helper()
	modules := needAgentCLI(t, c.cli)
	plan := planLongTask(1, wrapSteps, 0)
	ws, home := t.TempDir(), t.TempDir()
	plan.writeWorkspace(t, ws)
	up := newStrictUpstream(t, longTaskModel(plan, ws))
	guard := newOfflineGuard(t)

	files := c.home(up.URL)
	writeFiles(t, home, files)
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Written a while ago: a file the run rewrote, even to the same bytes,
	// shows a new time.
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	for name := range files {
		if err := os.Chtimes(filepath.Join(home, name), past, past); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshotFiles(t, home, files)

	log := filepath.Join(t.TempDir(), "ctxc.log")
	args := []string{"wrap", "--window", strconv.Itoa(window), "--log", log}
	if c.upstreamFlag {
		args = append(args, "--upstream", up.URL)
	}
	args = append(append(args, "--", c.command), c.args(plan.Prompts[0], ws)...)
	// The CLI is found on PATH, as its user's is.
	bin := t.TempDir()
	if err := os.Symlink(filepath.Join(modules, c.cli.installed), filepath.Join(bin, c.command)); err != nil {
		t.Fatal(err)
	}
	run := &cliRun{home: home, guard: guard.URL}
	env := run.baseEnv()
	for i, e := range env {
		if strings.HasPrefix(e, "PATH=") {
			env[i] = "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")
		}
	}
	env = append(append(append(env, noTelemetry...), c.env(up.URL)...), more...)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, ctxcBinary, args...)
	cmd.Dir, cmd.Env = ws, env
	// Killed with what it started, if it overstays.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	res := &wrapResult{plan: plan, err: err, stdout: stdout.Bytes(), stderr: stderr.Bytes(), wall: time.Since(start), requests: up.requests(), strict: up.strictness()}
	if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); len(lines) > 0 {
		res.summary = lines[len(lines)-1]
	}
	res.calls = readProxiedLog(t, log)
	if dir := os.Getenv("CTXC_WRAP_DUMP"); dir != "" {
		dump := map[string][]byte{"stdout.txt": res.stdout, "stderr.txt": res.stderr}
		for i, r := range res.requests {
			dump[fmt.Sprintf("request-%02d-%s.json", i, r.Endpoint)] = r.Body
		}
		if data, err := os.ReadFile(log); err == nil {
			dump["ctxc.log"] = data
		}
		writeDump(t, filepath.Join(dir, fmt.Sprintf("%s-%d", c.command, window)), dump)
	}

	for _, why := range res.strict.rejected {
		t.Errorf("the upstream refused, as the real API would, %s", why)
	}
	for _, host := range guard.tried() {
		// opencode installs its plugin package into its configuration
		// directory from npm, in the background, on every start; it logs
		// the guard's refusal and goes on.
		if c.command == "opencode" && host == "registry.npmjs.org:443" {
			continue
		}
		t.Errorf("the CLI tried to reach %s: it must run with loopback only", host)
	}
	if diff := cmp.Diff(before, snapshotFiles(t, home, files)); diff != "" {
		t.Errorf("the user's configuration files changed (-before +after):\n%s", diff)
	}
	return res
}

// fileState is a file's bytes and modification time.
type fileState struct {
	Content string
	ModTime time.Time
}

func snapshotFiles(t *testing.T, dir string, files map[string]string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	for name := range files {
		path := filepath.Join(dir, name)
		info, err := os.Stat(path)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = fileState{Content: string(data), ModTime: info.ModTime()}
	}
	return out
}

// readProxiedLog reads the "proxied" lines of ctxc wrap's --log.
func readProxiedLog(t *testing.T, path string) []wrapCall {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("ctxc wrap's log: %v", err)
		return nil
	}
	var out []wrapCall
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Msg string `json:"msg"`
			wrapCall
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "proxied" {
			out = append(out, line.wrapCall)
		}
	}
	return out
}

// wrapSummaryLine is the line ctxc wrap prints at exit.
var wrapSummaryLine = regexp.MustCompile(`^ctxc wrap: ([0-9,]+) requests?, ([0-9,]+) rewritten, ([0-9,]+) compactions?(?:, ([0-9,]+) refused by ctxc)?; tokens ([0-9,]+) in, ([0-9,]+) out, ([0-9,]+) saved$`)

// checkWrapSummary: the summary's figures are the proxy's, call by call
// as its log has them.
func checkWrapSummary(t *testing.T, res *wrapResult) {
	t.Helper()
	m := wrapSummaryLine.FindStringSubmatch(res.summary)
	if m == nil {
		t.Errorf("ctxc wrap's last line is %q, not its summary", res.summary)
		return
	}
	n := func(s string) int {
		v, _ := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
		return v
	}
	saved := 0
	for _, c := range res.calls {
		if c.Outcome != "refused" && c.TokensBefore > c.TokensAfter {
			saved += c.TokensBefore - c.TokensAfter
		}
	}
	got := []int{n(m[1]), n(m[2]), n(m[3]), n(m[4]), n(m[7])}
	want := []int{len(res.calls), res.outcome("rewritten"), res.compacted(), res.outcome("refused"), saved}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the summary %q is not what the proxy logged (-logged +printed; requests, rewritten, compactions, refused, saved):\n%s", res.summary, diff)
	}
	if in, out := n(m[5]), n(m[6]); in <= out || in-out < saved/2 {
		t.Errorf("the summary says %d tokens in and %d out, %d saved", in, out, saved)
	}
}

// windowsRow is a row of docs/agents.md's table of windows.
type windowsRow struct {
	version                  string
	sends, atLeast, testedIn int
}

// agentsWindowsTable reads docs/agents.md's table of windows, by CLI.
func agentsWindowsTable(t *testing.T) map[string]windowsRow {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "docs", "agents.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(raw), "<!-- agent windows: integration/wrap_test.go checks this table -->\n")
	if !ok {
		t.Fatal("docs/agents.md has no table of windows")
	}
	n := func(s string) int {
		v, err := strconv.Atoi(strings.ReplaceAll(strings.TrimSpace(s), ",", ""))
		if err != nil {
			t.Fatalf("docs/agents.md's table of windows: %q is not a number", s)
		}
		return v
	}
	rows := map[string]windowsRow{}
	for _, line := range strings.Split(table, "\n")[2:] {
		cells := strings.Split(line, "|")
		if len(cells) < 7 {
			break
		}
		rows[strings.TrimSpace(cells[1])] = windowsRow{version: strings.TrimSpace(cells[2]), sends: n(cells[3]), atLeast: n(cells[4]), testedIn: n(cells[5])}
	}
	return rows
}

// TestWrapWindowsTable keeps docs/agents.md's table of windows true to
// what the tests run: a row for each CLI, at the version package.json
// pins, the window the task runs in, and the least window: four thirds of
// its first call (a quarter is kept for the answer), rounded up to a
// thousand. TestWrapAgentCLIs compares what it always sends with what
// ctxc refused; the guide's "three shell calls" are wrapSteps.
func TestWrapWindowsTable(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "integration", proxyClients, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies, OptionalDependencies map[string]string
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	versions := pkg.Dependencies
	for name, v := range pkg.OptionalDependencies {
		versions[name] = v
	}
	rows := agentsWindowsTable(t)
	var got, want []string
	for _, c := range wrapCases() {
		a, ok := agentcli.Lookup(c.command)
		if !ok {
			t.Fatalf("%s is not an agent ctxc wrap knows", c.command)
		}
		row, ok := rows[a.Name]
		if !ok {
			t.Errorf("docs/agents.md's table has no row for %s", a.Name)
			continue
		}
		got = append(got, fmt.Sprintf("%s %s: at least %d, tested in %d", a.Name, row.version, row.atLeast, row.testedIn))
		want = append(want, fmt.Sprintf("%s %s: at least %d, tested in %d", a.Name, versions[c.pkg], (row.sends*4/3+999)/1000*1000, c.window))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("docs/agents.md's table of windows (-true +doc):\n%s", diff)
	}
	if len(rows) != len(wrapCases()) {
		t.Errorf("the table has %d rows for %d CLIs", len(rows), len(wrapCases()))
	}
	if doc := string(readFileOrFail(t, filepath.Join(repoRoot, "docs", "agents.md"))); wrapSteps != 3 || !strings.Contains(doc, "three shell calls") {
		t.Errorf("docs/agents.md's task is not the test's %d shell calls", wrapSteps)
	}
}

func readFileOrFail(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
