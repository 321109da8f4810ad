package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeCLI puts a shell script on a PATH of its own under the name of a
// supported CLI, and returns that PATH.
func fakeCLI(t *testing.T, name, script string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runWrapCmd runs `ctxc wrap args` in this process with PATH set to path.
func runWrapCmd(t *testing.T, path string, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("PATH", path)
	t.Setenv("HOME", t.TempDir())
	var out, errOut strings.Builder
	code := run(context.Background(), append([]string{"wrap"}, args...), stdio{in: strings.NewReader(""), out: &out, err: &errOut}, envFrom(nil))
	return code, out.String(), errOut.String()
}

func TestWrapNamesTheCLIsItKnows(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"no CLI", nil, []string{"name the agent CLI to run", "claude, codex, gemini, qwen, opencode, pi", "docs/agents.md"}},
		{"another CLI", []string{"--", "aider", "--yes"}, []string{`"aider" is not an agent CLI ctxc wrap knows`, "claude, codex, gemini, qwen, opencode, pi", "docs/agents.md"}},
		{"a window below 0", []string{"--window", "-1", "codex"}, []string{"--window -1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runWrapCmd(t, t.TempDir(), tt.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q does not say %q", errOut, w)
				}
			}
		})
	}
	code, _, errOut := runWrapCmd(t, t.TempDir(), "codex", "exec", "hi")
	if code != exitError || !strings.Contains(errOut, "codex (Codex) is not on PATH") || !strings.Contains(errOut, "npm install -g @openai/codex") {
		t.Errorf("a CLI not installed: exit %d, stderr %q", code, errOut)
	}
}

// TestWrapRunsTheCLIThroughItsProxy: the CLI found on PATH runs with
// ctxc's settings before the user's arguments, pointed at the proxy wrap
// started, and its exit code is wrap's; wrap says where it sent it and,
// at exit, that nothing went through.
func TestWrapRunsTheCLIThroughItsProxy(t *testing.T) {
	got := filepath.Join(t.TempDir(), "args")
	path := fakeCLI(t, "codex", `printf '%s\n' "$@" > `+got+`
exit 3
`)
	code, _, errOut := runWrapCmd(t, path, "--window", "16000", "--upstream", "http://127.0.0.1:9/v1", "--", "codex", "exec", "fix it")
	if code != 3 {
		t.Errorf("exit %d, want the CLI's 3; stderr:\n%s", code, errOut)
	}
	raw, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(args) != 6 || args[0] != "-c" || args[1] != `model_provider="ctxc"` || !strings.Contains(args[3], `base_url = "http://127.0.0.1:`) ||
		!strings.Contains(args[3], `"X-Ctxc-Max-Context-Tokens" = "16000"`) || args[4] != "exec" || args[5] != "fix it" {
		t.Errorf("the CLI's arguments: %q", args)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "ctxc wrap: codex through ctxc at http://127.0.0.1:") ||
		!strings.HasSuffix(lines[0], "(model provider ctxc (-c), a 16,000-token window) to http://127.0.0.1:9") ||
		lines[1] != "ctxc wrap: no request went through ctxc" {
		t.Errorf("stderr:\n%s", errOut)
	}
}

// TestWrapPassesSIGTERMOn: a SIGTERM to ctxc reaches the CLI, which ends
// as it chooses; ctxc, still running, exits with its code.
func TestWrapPassesSIGTERMOn(t *testing.T) {
	path := fakeCLI(t, "codex", `trap 'kill $!; exit 42' TERM
sleep 20 >/dev/null 2>&1 &
kill -TERM $PPID
wait
exit 0
`)
	code, _, errOut := runWrapCmd(t, path+string(os.PathListSeparator)+os.Getenv("PATH"), "--", "codex")
	if code != 42 {
		t.Errorf("exit %d, want the CLI's 42 after its SIGTERM; stderr:\n%s", code, errOut)
	}
}

func TestLoopbackUnproxied(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  []string
		want []string
	}{
		{"no proxy", []string{"PATH=/bin"}, []string{"PATH=/bin"}},
		{"a proxy", []string{"HTTPS_PROXY=http://proxy:3128"}, []string{"HTTPS_PROXY=http://proxy:3128", "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1"}},
		{"the user's exceptions kept", []string{"https_proxy=http://proxy:3128", "NO_PROXY=.corp,localhost"},
			[]string{"https_proxy=http://proxy:3128", "NO_PROXY=.corp,localhost,127.0.0.1", "no_proxy=.corp,localhost,127.0.0.1"}},
		{"loopback there already", []string{"ALL_PROXY=socks5://p:1080", "no_proxy=127.0.0.1, localhost"},
			[]string{"ALL_PROXY=socks5://p:1080", "NO_PROXY=127.0.0.1, localhost", "no_proxy=127.0.0.1, localhost"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, loopbackUnproxied(tt.env)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestWrapTotalsLine(t *testing.T) {
	for _, tt := range []struct {
		totals wrapTotals
		want   string
	}{
		{wrapTotals{calls: map[string]int{}}, "no request went through ctxc"},
		{wrapTotals{calls: map[string]int{"unchanged": 1}, in: 900, out: 900},
			"1 request, 0 rewritten, 0 compactions; tokens 900 in, 900 out, 0 saved"},
		{wrapTotals{calls: map[string]int{"unchanged": 2, "rewritten": 2, "refused": 1, "uncompiled": 1, "upstream_failed": 1}, compactions: 1,
			in: 47621, out: 38949, saved: 8672},
			"7 requests, 2 rewritten, 1 compaction, 1 refused by ctxc, 1 forwarded uncompiled, 1 failed upstream; tokens 47,621 in, 38,949 out, 8,672 saved"},
		{wrapTotals{calls: map[string]int{"rewritten": 1234}, compactions: 1234, in: 1234567, out: 1000, saved: 1233567},
			"1,234 requests, 1,234 rewritten, 1,234 compactions; tokens 1,234,567 in, 1,000 out, 1,233,567 saved"},
	} {
		if got := tt.totals.String(); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}
}
