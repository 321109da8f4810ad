package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/contextcompiler/ctxc/internal/docset"
	"github.com/contextcompiler/ctxc/internal/eval"
)

const transcriptsDir = "../../examples/transcripts"

// Every committed transcript of a real agent replays through the service in
// process with budget-aware at 16,000: every compile succeeds and is
// structurally valid, and its figures are printed. The facts-kept figure is
// only checked for sanity: the summarizer that decides it is improved
// elsewhere, and this test prints it for whoever does.
func TestCommittedTranscriptsReplay(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(transcriptsDir, "*.jsonl"))
	if err != nil || len(files) < 5 {
		t.Fatalf("the transcripts under %s: %v %v", transcriptsDir, files, err)
	}
	svc := testService(t)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			s, err := loadSession(file, nil, eval.FormatAuto)
			if err != nil {
				t.Fatal(err)
			}
			res, err := eval.Run(context.Background(), svc, []*eval.Session{s}, eval.Options{Profiles: []string{"budget-aware"}, Windows: []uint32{16_000}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Rows[0].Failed > 0 && preambleTooLarge(t, res) {
				// Claude Code's own system prompt and tools (in its request
				// bodies) leave no room in 16,000 tokens: refused, rightly;
				// the session is measured where it fits.
				if res, err = eval.Run(context.Background(), svc, []*eval.Session{s}, eval.Options{Profiles: []string{"budget-aware"}, Windows: []uint32{32_000}}); err != nil {
					t.Fatal(err)
				}
			}
			row, info := res.Rows[0], res.Sessions[0]
			if row.Compiles != info.Turns || row.Failed != 0 || row.Valid == nil || *row.Valid != 1 {
				t.Errorf("%d compiles for %d turns, %d failed (%v), valid %v; want every turn compiled, valid", row.Compiles, info.Turns, row.Failed, row.FailedCodes, row.Valid)
			}
			for _, c := range res.Compiles {
				for _, v := range c.Violations {
					t.Errorf("line %d: %s", c.Line, v)
				}
			}
			if info.FactSource != eval.SourceFound || info.FactKinds[eval.FactErrorCode] == 0 || info.FactKinds[eval.FactConstraint] == 0 {
				t.Errorf("facts found %d %v: want failure lines and requirements among them", info.Facts, info.FactKinds)
			}
			if k := row.FactsKeptLast; k == nil || *k <= 0 || *k > 1 {
				t.Errorf("facts kept at the last compile: %v", k)
			}
			var lost []string
			last := res.Compiles[len(res.Compiles)-1]
			lost = append(lost, last.Missing...)
			t.Logf("%s: %d turns, %d messages, %d tokens, %d facts %v; budget-aware %d: facts kept %.2f (last %.2f), window used %.2f; lost at the last compile: %q",
				info.ID, info.Turns, info.Messages, info.LogTokens, info.Facts, info.FactKinds, row.Window, deref(row.FactsKept), deref(row.FactsKeptLast), deref(row.WindowUsed), lost)
		})
	}
}

// irreducible is the refusal of a context whose system prompt and tools
// alone exceed the usable window.
var irreducible = regexp.MustCompile(`needs \d+ tokens, (\d+) available: what must be kept exceeds the usable window \(tokens: system prompt ([\d,]+), tools ([\d,]+),`)

// preambleTooLarge reports whether every compile of res was refused because
// the system prompt and tools alone do not fit, and fails the test for any
// other failure.
func preambleTooLarge(t *testing.T, res *eval.Result) bool {
	t.Helper()
	for _, c := range res.Compiles {
		m := irreducible.FindStringSubmatch(c.Error)
		if m == nil || c.Code != "ResourceExhausted" {
			t.Errorf("line %d: %s %s", c.Line, c.Code, c.Error)
			return false
		}
		available, _ := strconv.Atoi(m[1])
		system, _ := strconv.Atoi(strings.ReplaceAll(m[2], ",", ""))
		tools, _ := strconv.Atoi(strings.ReplaceAll(m[3], ",", ""))
		preamble := system + tools
		if preamble <= available {
			t.Errorf("line %d: refused although the system prompt and tools (%d tokens) fit in %d: %s", c.Line, preamble, available, c.Error)
			return false
		}
	}
	t.Logf("every compile at 16,000 refused: %s", res.Compiles[0].Error)
	return true
}

func deref(f *float64) float64 {
	if f == nil {
		return -1
	}
	return *f
}

// evalBlock is a block of a guide that shows what a `ctxc eval` command
// prints, between the markers of docset.EvalMarkers: the command, then
// its figures without the latency table (which depends on the machine).
type evalBlock struct {
	guide, name string
	args        []string // repository-relative paths
}

// evalBlocks are the guides' eval blocks: the recorded Claude Code and Codex
// sessions, the held-out ones (examples/transcripts/heldout, into 16K and
// 8K), and the example profile beside the built-in one it derives from, on
// the shipped session.
var evalBlocks = []evalBlock{
	{"docs/measuring.md", "claude-code-40.jsonl", transcriptEvalArgs("claude-code-40.jsonl")},
	{"docs/measuring.md", "codex-40.jsonl", transcriptEvalArgs("codex-40.jsonl")},
	{"docs/measuring.md", "heldout/codex-201.jsonl", heldOutEvalArgs("codex-201.jsonl", "")},
	{"docs/measuring.md", "heldout/codex-201.jsonl planted", heldOutEvalArgs("codex-201.jsonl", "facts-201.json")},
	{"docs/measuring.md", "heldout/claude-code-201.jsonl planted", heldOutEvalArgs("claude-code-201.jsonl", "facts-201.json")},
	{"docs/measuring.md", "heldout/codex-202.jsonl planted", heldOutEvalArgs("codex-202.jsonl", "facts-202.json")},
	{"docs/measuring.md", "heldout/claude-code-202.jsonl planted", heldOutEvalArgs("claude-code-202.jsonl", "facts-202.json")},
	{"README.md", "heldout/claude-code-202.jsonl readme", []string{"eval", "--profiles", "budget-aware,llm-assisted", "--windows", "16000,8000", "--facts", "examples/transcripts/heldout/facts-202.json", "examples/transcripts/heldout/claude-code-202.jsonl"}},
	{"docs/measuring.md", "examples/profiles.yaml", []string{"eval", "--config", "examples/profiles.yaml", "--profiles", "long-running-coder,budget-aware", "--windows", "16000,8000", "examples/sessions/long-coding-40.jsonl"}},
}

func transcriptEvalArgs(file string) []string {
	return []string{"eval", "--profiles", "budget-aware,policy-driven,llm-assisted", "--windows", "16000,32000", "examples/transcripts/" + file}
}

// heldOutEvalArgs measures a held-out session (make record-heldout) into
// 16K and 8K: on the facts eval finds in it, or with facts (a file of
// examples/transcripts/heldout) on those its plan planted.
func heldOutEvalArgs(file, facts string) []string {
	args := []string{"eval", "--profiles", "budget-aware,policy-driven,llm-assisted", "--windows", "16000,8000"}
	if facts != "" {
		args = append(args, "--facts", "examples/transcripts/heldout/"+facts)
	}
	return append(args, "examples/transcripts/heldout/"+file)
}

// The guides' eval blocks are what the commands print; the figures change
// when the policies do, so `go test ./cmd/ctxc -run TestGuideEvalBlocks
// -update` rewrites the blocks from what they print now.
func TestGuideEvalBlocks(t *testing.T) {
	t.Parallel() // long, and shares nothing with the other tests
	if testing.Short() && !*updateExample {
		t.Skip("runs every eval block of the guides; make test runs it")
	}
	checkEveryEvalMarkerListed(t)
	texts := map[string]string{}
	for _, b := range evalBlocks {
		if _, read := texts[b.guide]; read {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("../..", b.guide))
		if err != nil {
			t.Fatal(err)
		}
		texts[b.guide] = string(raw)
	}
	for _, b := range evalBlocks {
		args := slices.Clone(b.args)
		for i, a := range args {
			if _, err := os.Stat(filepath.Join("../..", a)); err == nil && strings.Contains(a, "/") {
				args[i] = filepath.Join("../..", a)
			}
		}
		code, out, errOut := runCommand(t, args...)
		if code != exitOK {
			t.Fatalf("ctxc %s: exit %d: %s", strings.Join(b.args, " "), code, errOut)
		}
		figures, _, _ := strings.Cut(out, "\nCompile latency")
		figures = strings.ReplaceAll(strings.TrimSpace(figures), "../../", "")
		text := texts[b.guide]
		begin, end := docset.EvalMarkers(b.name)
		begin += "\n"
		before, rest, ok := strings.Cut(text, begin)
		if !ok {
			t.Fatalf("%s has no %q marker", b.guide, strings.TrimSpace(begin))
		}
		_, after, ok := strings.Cut(rest, end)
		if !ok {
			t.Fatalf("%s has no %q marker", b.guide, end)
		}
		block := "```sh\n./bin/ctxc " + strings.Join(b.args, " ") + "\n```\n\n" + figures + "\n"
		if *updateExample {
			texts[b.guide] = before + begin + block + end + after
			continue
		}
		if got, _, _ := strings.Cut(rest, end); got != block {
			t.Errorf("%s's block for %s differs from what `ctxc %s` prints; run go test ./cmd/ctxc -run TestGuideEvalBlocks -update\n\nprints:\n%s\nthe guide has:\n%s", b.guide, b.name, strings.Join(b.args, " "), block, got)
		}
	}
	if *updateExample {
		for guide, text := range texts {
			if err := os.WriteFile(filepath.Join("../..", guide), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// checkEveryEvalMarkerListed: every eval block of the README and docs/ is
// one of evalBlocks, so that this test runs its command and compares what it
// prints (the integration tests' TestReadmeCommands leaves these commands to
// it rather than running each twice).
func checkEveryEvalMarkerListed(t *testing.T) {
	t.Helper()
	listed := map[string]bool{}
	for _, b := range evalBlocks {
		listed[b.guide+" "+b.name] = true
	}
	guides, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range append(guides, "../../README.md") {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		guide := strings.TrimPrefix(path, "../../")
		for _, line := range strings.Split(string(raw), "\n") {
			if name, ok := docset.EvalBegins(line); ok && !listed[guide+" "+name] {
				t.Errorf("%s has an eval block %q that evalBlocks does not list: no test runs its command", guide, name)
			}
		}
	}
}
