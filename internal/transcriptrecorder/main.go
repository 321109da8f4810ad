// Command transcriptrecorder records real agent sessions for `ctxc eval`:
// Claude Code and Codex CLI (from examples/transcripts/recorder's
// node_modules) and a small agent on the openai SDK, each run against the
// scripted model of internal/scriptedmodel on a fresh copy of
// examples/transcripts/workspace, a Go module with real bugs. The model's
// script (plan.go) makes each agent use its own tools, so the transcripts hold
// real compiler, vet, test and race-detector output. It writes what the
// agents wrote themselves (Claude Code's session JSONL, Codex's rollout JSONL)
// and the request bodies the scripted server received, one per line.
//
// Run it through scripts/record-transcripts.sh, which installs the CLIs
// first; it is not part of `make test`.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/contextcompiler/ctxc/internal/scriptedmodel"
)

// workRoot is where the workspace copy lives while an agent works on it; a
// fixed path, so re-recording gives the same paths in the transcripts.
const workRoot = "/tmp/ctxc-record"

// cliTimeout bounds one agent invocation (one user turn).
const cliTimeout = 10 * time.Minute

type session struct {
	name  string
	turns int
	run   func(ctx context.Context, r *recorder, s *session) error
	// requests, when set, names the file of the request bodies received.
	requests string
}

type recorder struct {
	root     string // the repository
	out      string // examples/transcripts
	goroot   string
	gocache  string
	protocol scriptedmodel.Protocol
}

func main() {
	root := flag.String("root", ".", "the ctxc repository")
	only := flag.String("only", "", "comma-separated sessions to record (default: all)")
	flag.Parse()
	sessions := []*session{
		{name: "claude-code-12", turns: 12, run: runClaude, requests: "claude-code-12.requests.jsonl"},
		{name: "claude-code-40", turns: 40, run: runClaude},
		{name: "codex-12", turns: 12, run: runCodex},
		{name: "codex-40", turns: 40, run: runCodex},
		{name: "openai-chat", turns: 4, run: runChat, requests: "openai-chat.requests.jsonl"},
	}
	abs, err := filepath.Abs(*root)
	if err != nil {
		fail(err)
	}
	r := &recorder{root: abs, out: filepath.Join(abs, "examples/transcripts")}
	if r.goroot, err = goEnv("GOROOT"); err == nil {
		r.gocache, err = goEnv("GOCACHE")
	}
	if err != nil {
		fail(err)
	}
	for _, s := range sessions {
		if *only != "" && !slices.Contains(strings.Split(*only, ","), s.name) {
			continue
		}
		fmt.Fprintf(os.Stderr, "recording %s (%d turns)\n", s.name, s.turns)
		if err := s.run(context.Background(), r, s); err != nil {
			fail(fmt.Errorf("%s: %w", s.name, err))
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "transcriptrecorder:", err)
	os.Exit(1)
}

func goEnv(name string) (string, error) {
	out, err := exec.Command("go", "env", name).Output()
	return strings.TrimSpace(string(out)), err
}

// prepare lays a fresh copy of the workspace at workRoot/invoicer, committed
// in a new git repository with a fixed author and date, and a fresh home.
func (r *recorder) prepare() (ws, home string, err error) {
	if err := os.RemoveAll(workRoot); err != nil {
		return "", "", err
	}
	ws, home = filepath.Join(workRoot, "invoicer"), filepath.Join(workRoot, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return "", "", err
	}
	if err := os.CopyFS(ws, os.DirFS(filepath.Join(r.root, "examples/transcripts/workspace"))); err != nil {
		return "", "", err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "Import the invoicer"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Dana Reyes", "GIT_AUTHOR_EMAIL=dana@example.com", "GIT_COMMITTER_NAME=Dana Reyes",
			"GIT_COMMITTER_EMAIL=dana@example.com", "GIT_AUTHOR_DATE=2026-11-02T09:00:00Z", "GIT_COMMITTER_DATE=2026-11-02T09:00:00Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("git %v: %v: %s", args, err, out)
		}
	}
	return ws, home, nil
}

// env is the agents' environment: a fresh home, the machine's Go build
// cache (so a recording does not rebuild the standard library), no toolchain
// downloads, and no credentials of the machine's.
func (r *recorder) env(home string, extra ...string) []string {
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GOCACHE=" + r.gocache, "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod",
		"GOPATH=" + filepath.Join(home, "go"), "LANG=C.UTF-8", "TERM=dumb", "TZ=UTC"}
	return append(env, extra...)
}

// serve starts the scripted model for a session's turns.
func (r *recorder) serve(s *session, d dialect, ws string) (*scriptedmodel.Server, *httptest.Server) {
	sc := &script{turns: turns[:s.turns], dialect: d, workspace: ws, goroot: r.goroot}
	sm := scriptedmodel.New(sc.reply)
	return sm, httptest.NewServer(sm)
}

func (r *recorder) command(ctx context.Context, dir string, env []string, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w\n%s%s", filepath.Base(name), strings.Join(args[:min(len(args), 3)], " "), err, out, stderr.Bytes())
	}
	return out, nil
}

// writeRequests writes the bodies of the requests of protocol p, one per line.
func (r *recorder) writeRequests(sm *scriptedmodel.Server, p scriptedmodel.Protocol, name string) error {
	var buf bytes.Buffer
	for _, req := range sm.Requests() {
		if req.Protocol != p {
			continue
		}
		if err := json.Compact(&buf, req.Body); err != nil {
			return fmt.Errorf("request %d: %w", req.Seq, err)
		}
		buf.WriteByte('\n')
	}
	return os.WriteFile(filepath.Join(r.out, name), buf.Bytes(), 0o644)
}

func (r *recorder) bin(name string) string {
	return filepath.Join(r.root, "examples/transcripts/recorder/node_modules/.bin", name)
}

// runClaude runs Claude Code headless, one `claude -p` per turn, resuming
// the first turn's session, and copies the session JSONL it wrote.
func runClaude(ctx context.Context, r *recorder, s *session) error {
	ws, home, err := r.prepare()
	if err != nil {
		return err
	}
	sm, srv := r.serve(s, claudeCode{}, ws)
	defer srv.Close()
	config := filepath.Join(home, ".claude")
	// IS_SANDBOX lets bypassPermissions run as root (the recording machine's
	// user); the rest keep Claude Code from calling anything but the model.
	env := r.env(home, "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=sk-ant-recording", "CLAUDE_CONFIG_DIR="+config, "IS_SANDBOX=1",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	sessionID := ""
	for i, t := range turns[:s.turns] {
		args := []string{"-p", t.user, "--output-format", "json", "--permission-mode", "bypassPermissions", "--dangerously-skip-permissions"}
		if sessionID != "" {
			args = append(args, "--resume", sessionID)
		}
		out, err := r.command(ctx, ws, env, r.bin("claude"), args...)
		if err != nil {
			return fmt.Errorf("turn %d: %w", i+1, err)
		}
		var res struct {
			SessionID string `json:"session_id"`
			IsError   bool   `json:"is_error"`
			Result    string `json:"result"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return fmt.Errorf("turn %d: %v: %s", i+1, err, out)
		}
		if res.IsError {
			return fmt.Errorf("turn %d: claude reports an error: %s", i+1, res.Result)
		}
		sessionID = res.SessionID
		fmt.Fprintf(os.Stderr, "  turn %d done\n", i+1)
	}
	transcript, err := findFile(filepath.Join(config, "projects"), sessionID+".jsonl")
	if err != nil {
		return err
	}
	if err := copyFile(transcript, filepath.Join(r.out, s.name+".jsonl")); err != nil {
		return err
	}
	if s.requests != "" {
		return r.writeRequests(sm, scriptedmodel.AnthropicMessages, s.requests)
	}
	return nil
}

// runCodex runs `codex exec` for the first turn and `codex exec resume` for
// the others, with a model provider at the scripted server speaking
// Responses, and copies the rollout it wrote under CODEX_HOME/sessions.
func runCodex(ctx context.Context, r *recorder, s *session) error {
	ws, home, err := r.prepare()
	if err != nil {
		return err
	}
	_, srv := r.serve(s, codex{}, ws)
	defer srv.Close()
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o755); err != nil {
		return err
	}
	env := r.env(home, "CODEX_HOME="+codexHome, "SCRIPTED_API_KEY=sk-recording")
	// gpt-5.5 is a model Codex knows, so it offers its apply_patch tool.
	config := []string{"-c", "model_provider=scripted", "-c", `model_providers.scripted={name="scripted",base_url="` + srv.URL + `/v1",env_key="SCRIPTED_API_KEY",wire_api="responses"}`,
		"-m", "gpt-5.5", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"}
	for i, t := range turns[:s.turns] {
		args := append([]string{"exec"}, config...)
		if i > 0 {
			args = append([]string{"exec", "resume", "--last"}, config...)
		}
		args = append(args, t.user)
		if _, err := r.command(ctx, ws, env, r.bin("codex"), args...); err != nil {
			return fmt.Errorf("turn %d: %w", i+1, err)
		}
		fmt.Fprintf(os.Stderr, "  turn %d done\n", i+1)
	}
	rollouts, err := filesUnder(filepath.Join(codexHome, "sessions"), ".jsonl")
	if err != nil {
		return err
	}
	if len(rollouts) != 1 {
		return fmt.Errorf("%d rollout files under %s, want the one session's", len(rollouts), codexHome)
	}
	return copyFile(rollouts[0], filepath.Join(r.out, s.name+".jsonl"))
}

// runChat runs chat-agent.mjs (the openai SDK's Chat Completions) and keeps
// the request bodies the scripted server received.
func runChat(ctx context.Context, r *recorder, s *session) error {
	ws, home, err := r.prepare()
	if err != nil {
		return err
	}
	sm, srv := r.serve(s, chatAgent{}, ws)
	defer srv.Close()
	var prompts []string
	for _, t := range turns[:s.turns] {
		prompts = append(prompts, t.user)
	}
	raw, _ := json.Marshal(prompts)
	promptFile := filepath.Join(home, "prompts.json")
	if err := os.WriteFile(promptFile, raw, 0o644); err != nil {
		return err
	}
	env := r.env(home, "SCRIPTED_URL="+srv.URL, "WORKSPACE="+ws, "PROMPTS="+promptFile)
	dir := filepath.Join(r.root, "examples/transcripts/recorder")
	if _, err := r.command(ctx, dir, env, "node", "chat-agent.mjs"); err != nil {
		return err
	}
	return r.writeRequests(sm, scriptedmodel.ChatCompletions, s.requests)
}

func findFile(dir, name string) (string, error) {
	var found string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == name {
			found = path
		}
		return err
	})
	if err == nil && found == "" {
		err = fmt.Errorf("no %s under %s", name, dir)
	}
	return found, err
}

func filesUnder(dir, suffix string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, suffix) {
			files = append(files, path)
		}
		return err
	})
	if errors.Is(err, fs.ErrNotExist) {
		err = fmt.Errorf("%s does not exist: the agent wrote no session", dir)
	}
	return files, err
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o644)
}
