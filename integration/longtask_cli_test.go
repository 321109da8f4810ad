//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/contextcompiler/ctxc/internal/testtools"
)

// agentCLI is one real agent CLI from integration/testdata/proxy-clients,
// run headless: how it is pointed at a base URL with a window, how one
// prompt (or a further prompt of the same session) is run, and how its final
// answer is read from what it printed.
type agentCLI struct {
	// name is the CLI's in the table; short its in subtest and dump names.
	name, short string
	// upstream is the proxy's upstream it speaks (the --proxy-NAME-upstream flag).
	upstream string
	// installed is the file, under node_modules, that the CLI is run from.
	installed string
	// configure writes the CLI's configuration under run.home.
	configure func(t *testing.T, run *cliRun)
	// command is the command line (the program first) and environment of
	// prompt i.
	command func(run *cliRun, prompt string, i int) (args, env []string)
	// answer is the final answer in what the CLI printed.
	answer func(stdout []byte) string
	// thinks says the CLI asks its model to think (Claude Code's adaptive
	// thinking, Codex's reasoning with its encrypted content, Gemini CLI's
	// thoughts): a strict upstream's replies carry its signatures, which
	// must come back to it (newStrictUpstream).
	thinks bool
	// ownContext says the CLI manages its context itself: it drops or
	// masks old tool outputs, or re-sends a history without the first
	// prompt, before ctxc sees a request. What it did not send, ctxc
	// cannot keep: its runs are held to what it sent.
	ownContext string
	// fixedTokens is what its system prompt, tools and pinned environment
	// take, when that alone is over some window's usable share: below that
	// window it must be refused, saying so (longResult.check).
	fixedTokens int
}

// cliRun is one run of a CLI on a long task.
type cliRun struct {
	cli *agentCLI
	// modules is the proxy clients' node_modules.
	modules  string
	ws, home string
	// root is the server the CLI calls: the proxy's base URL, or the
	// scripted upstream's for a run without ctxc.
	root string
	// window is X-Ctxc-Max-Context-Tokens (0: no header).
	window int
	// guard is the proxy every other connection is sent to (offlineGuard).
	guard string
}

func (r *cliRun) bin() string { return filepath.Join(r.modules, r.cli.installed) }

// windowHeader is the window header's value ("" without a window).
func (r *cliRun) windowHeader() string {
	if r.window == 0 {
		return ""
	}
	return strconv.Itoa(r.window)
}

// baseEnv is every CLI's environment: a home of its own, no proxy but the
// guard (loopback excepted), the machine's PATH for sh and cat, and plain
// output.
func (r *cliRun) baseEnv() []string {
	env := []string{"HOME=" + r.home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "TZ=UTC", "TERM=dumb", "NO_COLOR=1", "USER=agent",
		"TMPDIR=" + filepath.Join(r.home, "tmp")}
	for _, name := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
		env = append(env, name+"="+r.guard)
	}
	return append(env, "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The four CLIs and the versions package.json pins.
var (
	// Codex CLI 0.171.0: OpenAI Responses, through a model provider of its
	// config with the window as an HTTP header of the provider; gpt-5.5 is
	// a model it knows (so it offers its own tools). No update check, no
	// analytics or feedback upload, no apps or plugins.
	codexCLI = &agentCLI{
		name: "Codex", short: "codex", upstream: "openai", installed: ".bin/codex", thinks: true,
		configure: func(t *testing.T, r *cliRun) {
			headers := ""
			if r.window > 0 {
				headers = fmt.Sprintf("http_headers = { \"X-Ctxc-Max-Context-Tokens\" = \"%d\" }\n", r.window)
			}
			writeFiles(t, r.home, map[string]string{".codex/config.toml": `model = "gpt-5.5"
model_provider = "scripted"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

# ChatGPT apps and plugins sync from chatgpt.com and GitHub.
[features]
apps = false
plugins = false
remote_plugin = false
plugin_sharing = false

[model_providers.scripted]
name = "scripted"
base_url = "` + r.root + `/v1"
env_key = "SCRIPTED_API_KEY"
wire_api = "responses"
` + headers})
		},
		command: func(r *cliRun, prompt string, i int) ([]string, []string) {
			args := []string{r.bin(), "exec"}
			if i > 0 {
				args = append(args, "resume", "--last")
			}
			args = append(args, "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", prompt)
			return args, []string{"CODEX_HOME=" + filepath.Join(r.home, ".codex"), "SCRIPTED_API_KEY=" + plantedKey}
		},
		answer: func(stdout []byte) string { return strings.TrimSpace(string(stdout)) },
	}

	// Gemini CLI 0.61.0: the Gemini API at GOOGLE_GEMINI_BASE_URL with a
	// key (its gemini-api-key authentication), the window in
	// GEMINI_CLI_CUSTOM_HEADERS; --yolo approves its shell tool. Usage
	// statistics, telemetry and update checks off; it trusts the
	// workspace and does not relaunch itself.
	geminiCLI = &agentCLI{
		name: "Gemini CLI", short: "gemini", upstream: "gemini", installed: "@google/gemini-cli/bundle/gemini.js", thinks: true,
		ownContext: "it masks old tool outputs itself (<tool_output_masked>), and --resume re-sends the history without the first prompt",
		configure: func(t *testing.T, r *cliRun) {
			writeFiles(t, r.home, map[string]string{".gemini/settings.json": `{
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "ide": {"enabled": false},
  "security": {"auth": {"selectedType": "gemini-api-key"}}
}
`})
		},
		command: func(r *cliRun, prompt string, i int) ([]string, []string) {
			args := []string{r.bin(), "-p", prompt, "--yolo", "-m", "gemini-2.5-flash", "--output-format", "json"}
			if i > 0 {
				args = append(args, "--resume", "latest")
			}
			env := []string{"GOOGLE_GEMINI_BASE_URL=" + r.root, "GEMINI_API_KEY=" + plantedKey, "GEMINI_CLI_NO_RELAUNCH=true", "GEMINI_CLI_TRUST_WORKSPACE=true"}
			if r.window > 0 {
				env = append(env, "GEMINI_CLI_CUSTOM_HEADERS=X-Ctxc-Max-Context-Tokens: "+r.windowHeader())
			}
			return append([]string{"node"}, args...), env
		},
		answer: func(stdout []byte) string {
			var out struct {
				Response string `json:"response"`
			}
			_ = json.Unmarshal(stdout, &out)
			return out.Response
		},
	}

	// pi 0.73.1 (@mariozechner/pi-coding-agent): Chat Completions through a
	// provider of its models.json, the window as one of the provider's
	// headers; print mode (-p), -c continues the session. PI_OFFLINE turns
	// off its update check and install telemetry.
	piCLI = &agentCLI{
		name: "pi", short: "pi", upstream: "openai", installed: "@mariozechner/pi-coding-agent/dist/cli.js",
		configure: func(t *testing.T, r *cliRun) {
			provider := map[string]any{
				"baseUrl": r.root + "/v1", "api": "openai-completions", "apiKey": "SCRIPTED_API_KEY",
				// A model of a large window that answers at most 4,096
				// tokens, as a small window's model would be configured.
				"models": []any{map[string]any{"id": "gpt-4.1", "contextWindow": 1047576, "maxTokens": 4096}},
			}
			if r.window > 0 {
				provider["headers"] = map[string]string{"X-Ctxc-Max-Context-Tokens": r.windowHeader()}
			}
			writeFiles(t, r.home, map[string]string{
				".pi/agent/models.json":   string(mustJSON(map[string]any{"providers": map[string]any{"scripted": provider}})),
				".pi/agent/settings.json": `{"enableInstallTelemetry": false}`,
			})
		},
		command: func(r *cliRun, prompt string, i int) ([]string, []string) {
			args := []string{"node", r.bin(), "-p", "--provider", "scripted", "--model", "gpt-4.1", "--no-extensions", "--no-skills", "--no-prompt-templates", "--no-themes"}
			if i > 0 {
				args = append(args, "-c")
			}
			return append(args, prompt), []string{"PI_CODING_AGENT_DIR=" + filepath.Join(r.home, ".pi/agent"), "SCRIPTED_API_KEY=" + plantedKey,
				"PI_OFFLINE=1", "PI_TELEMETRY=0", "PI_SKIP_VERSION_CHECK=1"}
		},
		answer: func(stdout []byte) string { return strings.TrimSpace(string(stdout)) },
	}

	// Claude Code 2.1.332 (its native binary): Anthropic Messages at
	// ANTHROPIC_BASE_URL, the window in ANTHROPIC_CUSTOM_HEADERS; -p with
	// JSON output, --continue for a further prompt; Bash allowed. No
	// telemetry, error reporting, update or other non-essential traffic.
	claudeCLI = &agentCLI{
		name: "Claude Code", short: "claude", upstream: "anthropic", installed: "@anthropic-ai/claude-code-linux-x64/claude", thinks: true,
		ownContext:  "it keeps only the head and tail of a long tool output",
		fixedTokens: 13_030, // system prompt 1,932, tools 8,272, its environment (pinned) 2,562 and first task 264, as ctxc counts them

		configure: func(t *testing.T, r *cliRun) {},
		command: func(r *cliRun, prompt string, i int) ([]string, []string) {
			args := []string{r.bin(), "-p", prompt, "--output-format", "json", "--allowedTools", "Bash"}
			if i > 0 {
				args = append(args, "--continue")
			}
			env := []string{"ANTHROPIC_BASE_URL=" + r.root, "ANTHROPIC_API_KEY=" + plantedKey, "CLAUDE_CONFIG_DIR=" + filepath.Join(r.home, ".claude"),
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1"}
			if r.window > 0 {
				env = append(env, "ANTHROPIC_CUSTOM_HEADERS=X-Ctxc-Max-Context-Tokens: "+r.windowHeader())
			}
			return args, env
		},
		answer: func(stdout []byte) string {
			var out struct {
				Result  string `json:"result"`
				IsError bool   `json:"is_error"`
			}
			if json.Unmarshal(stdout, &out) != nil || out.IsError {
				return ""
			}
			return out.Result
		},
	}
)

var agentCLIs = []*agentCLI{codexCLI, geminiCLI, piCLI, claudeCLI}

// promptRun is what one prompt's run of a CLI left.
type promptRun struct {
	exitErr        error
	stdout, stderr []byte
	wall, cpu      time.Duration
}

// cliTimeout bounds one prompt: 80 steps of the slowest CLI take a few
// minutes.
const cliTimeout = 15 * time.Minute

// runPrompt runs prompt i of the session in the workspace. cpu is the
// user and system time of the CLI and every process it waited for (its
// shell calls).
func (r *cliRun) runPrompt(t *testing.T, prompt string, i int) promptRun {
	t.Helper()
	argv, env := r.cli.command(r, prompt, i)
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = r.ws, append(r.baseEnv(), env...)
	// A CLI past its time is killed with what it started (Codex's node
	// launcher runs the binary, which runs the shell calls).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	out := promptRun{exitErr: err, stdout: stdout.Bytes(), stderr: stderr.Bytes(), wall: time.Since(start)}
	if cmd.ProcessState != nil {
		out.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if ctx.Err() != nil {
		out.exitErr = fmt.Errorf("did not finish in %v: %w", cliTimeout, err)
	}
	return out
}

// offlineGuard is the HTTP proxy a CLI's environment names for everything
// but loopback: a CLI (or a library in it) that honours the proxy
// variables and tries to reach the internet is recorded and refused here,
// so no run depends on the network and the report can say who tried.
type offlineGuard struct {
	*httptest.Server
	mu    sync.Mutex
	hosts []string
}

func newOfflineGuard(t *testing.T) *offlineGuard {
	g := &offlineGuard{}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.hosts = append(g.hosts, r.Host)
		g.mu.Unlock()
		http.Error(w, "no network in this test", http.StatusForbidden)
	}))
	t.Cleanup(g.Close)
	return g
}

func (g *offlineGuard) tried() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.hosts...)
}

// needAgentCLI stops a test when a CLI is not installed (a failure under
// make test, which installs them).
func needAgentCLI(t *testing.T, cli *agentCLI) string {
	t.Helper()
	dir := filepath.Join(needProxyClients(t), "node_modules")
	if _, err := os.Stat(filepath.Join(dir, cli.installed)); err != nil {
		testtools.Missing(t, cli.name+" is not installed at "+filepath.Join(dir, cli.installed), "cd integration/"+proxyClients+" && npm ci")
	}
	return dir
}

// tapHeader numbers each request the CLI sends; ctxc passes the client's
// headers on, so the upstream's copy of a request names what the CLI sent.
const tapHeader = "X-Longtask-Seq"

// cliTap is a reverse proxy between a CLI and ctxc that keeps every request
// body the CLI sent: what ctxc condensed is measured against what the CLI
// itself sent, since a CLI may drop or mask old outputs on its own (Gemini
// CLI does).
type cliTap struct {
	*httptest.Server
	mu   sync.Mutex
	sent map[string][]byte
}

func newCLITap(t *testing.T, target string) *cliTap {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	tap := &cliTap{sent: map[string][]byte{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1 // streams as they come
	tap.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		tap.mu.Lock()
		seq := strconv.Itoa(len(tap.sent))
		tap.sent[seq] = body
		tap.mu.Unlock()
		r.Header.Set(tapHeader, seq)
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(tap.Close)
	return tap
}

// sentBy is the body the CLI sent for a request the upstream received (the
// upstream's own body when there is no tap: straight to the model).
func (tap *cliTap) sentBy(r upstreamRequest) []byte {
	if tap == nil {
		return r.Body
	}
	tap.mu.Lock()
	defer tap.mu.Unlock()
	if body, ok := tap.sent[r.Header.Get(tapHeader)]; ok {
		return body
	}
	return r.Body
}
