package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/components"
)

// runCLI runs the program with args and the environment env and returns its
// exit code, standard output and standard error.
func runCLI(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut strings.Builder
	code := run(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errOut}, envFrom(env))
	return code, out.String(), errOut.String()
}

func TestMistypedNamesGetTheClosest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string // standard error
	}{
		{[]string{"serve", "--lisen", ":1"}, "ctxc serve: unknown flag --lisen\nDid you mean --listen?\nRun `ctxc serve --help` for its flags.\n"},
		{[]string{"serve", "-http-listn=:1"}, "ctxc serve: unknown flag --http-listn\nDid you mean --http-listen?\nRun `ctxc serve --help` for its flags.\n"},
		{[]string{"compile", "--profil", "x", "f.json"}, "ctxc compile: unknown flag --profil\nDid you mean --profile?\nRun `ctxc compile --help` for its flags.\n"},
		{[]string{"serve", "--zzzzzz"}, "ctxc serve: unknown flag --zzzzzz\nRun `ctxc serve --help` for its flags.\n"},
		{[]string{"serve", "--listen"}, "ctxc serve: flag needs an argument: -listen\nRun `ctxc serve --help` for its flags.\n"},
	}
	for _, tt := range tests {
		code, out, errOut := runCLI(t, nil, tt.args...)
		if code != exitUsage || out != "" {
			t.Errorf("%v: exit %d, stdout %q; want %d and nothing", tt.args, code, out, exitUsage)
		}
		if diff := cmp.Diff(tt.want, errOut); diff != "" {
			t.Errorf("%v: stderr (-want +got):\n%s", tt.args, diff)
		}
	}
	if code, _, errOut := runCLI(t, nil, "serv"); code != exitUsage || !strings.HasPrefix(errOut, "ctxc: unknown command \"serv\"\nDid you mean \"serve\"?\n") {
		t.Errorf("unknown command: exit %d, stderr:\n%s", code, errOut)
	}
}

func TestCompileReportsAParseErrorOnce(t *testing.T) {
	t.Parallel()
	// protobuf varies its error texts' spacing on purpose, so each error is
	// matched by its words.
	tests := []struct {
		content string
		want    []string // in order, each once
	}{
		{"hello: world\n", []string{"invalid value hello"}},
		{`{"foo": 1}`, []string{`unknown field "foo"`}},
		// Each form fails differently: both are said, labelled.
		{`{"state": {}, "bogus": 1}`, []string{`as a CompileRequest: proto:`, `unknown field "bogus"`, `; as an AgentState: proto:`, `unknown field "state"`}},
	}
	for _, tt := range tests {
		file := writeFile(t, "state.json", tt.content)
		code, _, errOut := runCLI(t, nil, "compile", file)
		prefix := "ctxc compile: " + file + " is neither a ctxc.v1.CompileRequest nor a ctxc.v1.AgentState in protojson: "
		if code != exitError || !strings.HasPrefix(errOut, prefix) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr:\n%s", tt.content, code, errOut)
			continue
		}
		rest := errOut[len(prefix):]
		for _, w := range tt.want {
			if strings.Count(errOut, w) != 1 || !strings.Contains(rest, w) {
				t.Errorf("%q: %q appears %d times in:\n%s", tt.content, w, strings.Count(errOut, w), errOut)
			}
			_, rest, _ = strings.Cut(rest, w)
		}
	}
}

// TestStartupProblemsInOneList: every problem of every part of the
// configuration (a setting, the tracing variables, the model registry, the
// helper models, the cache, the profiles and the default profile) is listed
// at once, one per line with its whole path.
func TestStartupProblemsInOneList(t *testing.T) {
	file := writeFile(t, "ctxc.yaml", `
model_registry:
  - {name: acme, encoding: cl100k_base, context_window: 1000}
models:
  planner: {model: m, base_url: "ftp://x"}
summary_cache:
  ttl: -1s
default_profile: nope
profiles:
  - name: mine
    stages:
      - policy: normalize
      - policy: summarise
      - policy: summarize
`)
	code, _, errOut := runCLI(t, map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, "serve", "--config", file, "--log-level", "loud")
	want := `ctxc: invalid configuration:
  - OpenTelemetry trace exporter: OTEL_TRACES_EXPORTER: "zipkin" unknown (known: otlp, console, none)
  - log_level: "loud" must be debug, info, warn or error
  - model_registry: model "acme": estimator "" unknown (known: exact, calibrated, chars)
  - models.planner: base_url: "ftp://x" is not an http(s) URL
  - summary_cache: ttl: -1s must be positive
  - profiles[0] (mine): stages[1] (summarise): unknown policy "summarise" (known: POLICIES)
  - profiles[0] (mine): stages: a compact policy needs estimate and budget policies before it
  - default_profile: "nope" is not a profile (known: budget-aware, llm-assisted, mine, policy-driven, pragmatic)
`
	reg, err := components.Registry(components.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	want = strings.Replace(want, "POLICIES", strings.Join(reg.Types(), ", "), 1)
	if diff := cmp.Diff(want, errOut); code != exitError || diff != "" {
		t.Errorf("exit %d, stderr (-want +got):\n%s", code, diff)
	}

	// Entries meant for the registry under models get a pointer to it.
	file = writeFile(t, "ctxc.yaml", "models:\n  - name: acme\n")
	if _, _, errOut := runCLI(t, nil, "profiles", "--config", file); !strings.Contains(errOut, "line 2: models: a list is not a mapping of keys (models holds the helper models planner and summarizer; model entries go under model_registry)") {
		t.Errorf("stderr:\n%s", errOut)
	}
}

// TestUnknownModelHintLeadsToModelRegistry follows the hint of an unknown
// model's error: the same state compiles once examples/profiles.yaml adds the
// model to model_registry.
func TestUnknownModelHintLeadsToModelRegistry(t *testing.T) {
	state := writeFile(t, "state.json", `{"model": {"name": "acme-coder"}, "context": {"messages": [{"id": "u1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}]}}`)
	code, _, errOut := runCLI(t, nil, "compile", state)
	if code != exitError || !strings.Contains(errOut, "add the model to the config file's model_registry (name, provider, encoding, estimator, context_window; see examples/profiles.yaml)") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	code, out, errOut := runCLI(t, nil, "compile", "--config", "../../examples/profiles.yaml", state)
	if code != exitOK || !strings.Contains(out, `"contextWindowTokenCount": 32768`) || !strings.Contains(out, `"counter": "cl100k_base*1.10"`) {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestFlagsMayFollowTheFiles: `ctxc compile FILE --profile X` runs as
// `ctxc compile --profile X FILE` does (it once said "give exactly one
// FILE"), and so does eval with its flags after the sessions; after "--"
// an argument is a file even when it looks like a flag.
func TestFlagsMayFollowTheFiles(t *testing.T) {
	const chat = "../../examples/chat.json"
	session := filepath.Join(t.TempDir(), "short.jsonl")
	if err := os.WriteFile(session, []byte(runCLIOut(t, "eval", "--generate", "7", "--turns", "4")), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		before, now []string
	}{
		{"compile", []string{"compile", "--profile", "policy-driven", chat}, []string{"compile", chat, "--profile", "policy-driven"}},
		{"compile, = form", []string{"compile", "--profile=policy-driven", chat}, []string{"compile", chat, "-profile=policy-driven"}},
		{"eval", []string{"eval", "--profiles", "policy-driven", "--windows", "8000", session},
			[]string{"eval", session, "--profiles", "policy-driven", "--windows", "8000"}},
		{"eval, flags on both sides", []string{"eval", "--profiles", "policy-driven", "--windows", "8000", session},
			[]string{"eval", "--profiles", "policy-driven", session, "--windows", "8000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantCode, wantOut, wantErr := runCLI(t, nil, tt.before...)
			if wantCode != exitOK {
				t.Fatalf("%v: exit %d: %s", tt.before, wantCode, wantErr)
			}
			code, out, errOut := runCLI(t, nil, tt.now...)
			if code != exitOK {
				t.Fatalf("%v: exit %d: %s", tt.now, code, errOut)
			}
			// Times differ from run to run: eval's latency figures, compile's stage durations.
			times := regexp.MustCompile(`(?s)\nCompile latency.*|\n *"durationMicros": "\d+",`)
			wantOut, out = times.ReplaceAllString(wantOut, ""), times.ReplaceAllString(out, "")
			if diff := cmp.Diff(wantOut, out); diff != "" {
				t.Errorf("%v prints otherwise than %v (-flags first +flags after):\n%s", tt.now, tt.before, diff)
			}
		})
	}
	if !strings.Contains(runCLIOut(t, "compile", chat, "--profile", "policy-driven"), `"profile": "policy-driven"`) {
		t.Errorf("compile FILE --profile policy-driven did not compile with policy-driven")
	}

	// After --, "--profile" is a second file: two files are one too many.
	code, _, errOut := runCLI(t, nil, "compile", chat, "--", "--profile")
	if code != exitUsage || !strings.HasPrefix(errOut, "ctxc compile: give exactly one FILE") {
		t.Errorf("compile FILE -- --profile: exit %d, stderr:\n%s", code, errOut)
	}
}

// runCLIOut is the standard output of a command that must succeed.
func runCLIOut(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := runCLI(t, nil, args...)
	if code != exitOK {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	return out
}
