//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	ctxceval "github.com/contextcompiler/ctxc/internal/eval"
)

// heldOutRoot is where a held-out session's workspace and the CLI's home
// are while it records: a fixed path, so recording again gives the same
// paths in the transcripts.
var heldOutRoot = filepath.Join(os.TempDir(), "ctxc-heldout")

// heldOutCLIs are the CLIs whose own session files `ctxc eval` reads, with
// the name of the file each records: Codex CLI's rollout and Claude Code's
// session transcript. pi writes no session file eval reads. Gemini CLI's
// chat file is one eval reads, but not of a session of many prompts:
// Gemini CLI 0.61 resumes (gemini -p --resume latest) from a history that
// has lost the first prompt, writes that history again under new ids, and
// doubles every function response in it, so the file of a 40-prompt
// session is 28 MB and no longer the session the model was asked (eval
// refuses it: the reloaded conversation starts with calls). The recorder
// still records it when asked (CTXC_RECORD_ONLY=gemini-…), joining the
// files a resume starts.
var heldOutCLIs = []struct {
	cli  *agentCLI
	name string
}{{codexCLI, "codex"}, {claudeCLI, "claude-code"}}

// TestRecordHeldOutSessions records the held-out sessions of real agent
// CLIs that docs/measuring.md ("Real agents' transcripts") measures with
// `ctxc eval`: for each seed of heldOutSessionSeeds and each CLI of
// heldOutCLIs, a session of 40 prompts on one workspace (plan:
// planHeldOutSession), the CLI headless (codex exec, then codex exec
// resume --last; claude -p, then claude -p --continue; gemini -p, then
// gemini -p --resume latest) straight to the scripted model, no ctxc in
// between. It keeps what the CLI wrote itself: Codex's rollout
// (CODEX_HOME/sessions/…), Claude Code's transcript
// (CLAUDE_CONFIG_DIR/projects/*/*.jsonl) and Gemini CLI's chat file
// (~/.gemini/tmp/*/chats/*.jsonl), as NAME-SEED.jsonl, and the session's
// plan (prompts, notes, planted failures) as plan-SEED.json.
//
// It is a recorder, not a test of make test: it runs only with
// CTXC_RECORD_SESSIONS=dir (make record-heldout writes
// examples/transcripts/heldout). CTXC_RECORD_PROMPTS changes the number of
// prompts, CTXC_RECORD_ONLY=codex-201,… records only those, and
// CTXC_RECORD_SEEDS=301,… sessions of other seeds: sessions of the same
// kind to tune on, kept out of the held-out directory.
func TestRecordHeldOutSessions(t *testing.T) {
	dir := os.Getenv("CTXC_RECORD_SESSIONS")
	if dir == "" {
		t.Skip("CTXC_RECORD_SESSIONS=dir records the held-out sessions (make record-heldout)")
	}
	prompts := 40
	if v := os.Getenv("CTXC_RECORD_PROMPTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 {
			t.Fatalf("CTXC_RECORD_PROMPTS=%q: want a number of prompts, 2 or more", v)
		}
		prompts = n
	}
	var only []string
	if v := os.Getenv("CTXC_RECORD_ONLY"); v != "" {
		only = strings.Split(v, ",")
	}
	seeds := heldOutSessionSeeds
	if v := os.Getenv("CTXC_RECORD_SEEDS"); v != "" {
		seeds = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 {
				t.Fatalf("CTXC_RECORD_SEEDS=%q: want seeds, positive numbers", v)
			}
			seeds = append(seeds, n)
		}
	}
	clis := heldOutCLIs
	if only != nil {
		clis = append(clis, struct {
			cli  *agentCLI
			name string
		}{geminiCLI, "gemini"})
	}
	for _, seed := range seeds {
		s := planHeldOutSession(seed, prompts)
		if problems := s.check(); len(problems) > 0 {
			t.Fatalf("seed %d: the plan is not one the scripted model can follow:\n%s", seed, strings.Join(problems, "\n"))
		}
		writeDump(t, dir, map[string][]byte{
			fmt.Sprintf("plan-%d.json", seed):  heldOutPlanJSON(s),
			fmt.Sprintf("facts-%d.json", seed): heldOutFactsJSON(s),
		})
		for _, c := range clis {
			name := fmt.Sprintf("%s-%d", c.name, seed)
			if only != nil && !slices.Contains(only, name) {
				continue
			}
			t.Run(name, func(t *testing.T) {
				data := recordHeldOutSession(t, c.cli, s)
				writeDump(t, dir, map[string][]byte{name + ".jsonl": data})
				t.Logf("%s: %d prompts, %d steps, %d bytes", name, len(s.Prompts), s.Ends[len(s.Ends)-1], len(data))
			})
		}
	}
}

// heldOutPlanJSON is the plan a session's file is checked against: its
// seed, service and check command, each prompt with its steps, note and
// answer, and the planted failures (step, identifier, form and line).
func heldOutPlanJSON(s *heldOutSession) []byte {
	type prompt struct {
		Text   string `json:"text"`
		Steps  [2]int `json:"steps"`
		Answer string `json:"answer"`
	}
	out := struct {
		Seed     int              `json:"seed"`
		Service  string           `json:"service"`
		Package  string           `json:"package"`
		Command  string           `json:"command"`
		Prompts  []prompt         `json:"prompts"`
		Notes    []sessionNote    `json:"notes"`
		Failures []plantedFailure `json:"failures"`
		Tokens   []int            `json:"output_tokens"`
	}{Seed: s.Seed, Service: s.service, Package: s.pkg, Command: s.Command, Notes: s.Notes, Failures: s.Failures, Tokens: s.Tokens}
	for i, text := range s.Prompts {
		out.Prompts = append(out.Prompts, prompt{Text: text, Steps: [2]int{s.Starts[i], s.Ends[i]}, Answer: s.Answers[i]})
	}
	raw, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(raw, '\n')
}

// heldOutFactsJSON is the facts file `ctxc eval --facts` measures a
// session of the plan on: each constraint, decision and fact of a prompt
// in the prompt's words, and each planted failure's identifier, from the
// turn that brought it.
func heldOutFactsJSON(s *heldOutSession) []byte {
	kinds := map[string]ctxceval.FactKind{"constraint": ctxceval.FactConstraint, "decision": ctxceval.FactDecision, "fact": ctxceval.FactOther}
	var out ctxceval.FactsFile
	for i, n := range s.Notes {
		kind, ok := kinds[n.Kind]
		if !ok {
			panic(fmt.Sprintf("note %d: kind %q has no fact kind", i, n.Kind))
		}
		out.Facts = append(out.Facts, ctxceval.Fact{ID: fmt.Sprintf("%s-%d", n.Kind, i+1), Kind: kind, Text: n.Text, Turn: n.Prompt})
	}
	for _, f := range s.Failures {
		turn := 0
		for i := range s.Prompts {
			if f.Step >= s.Starts[i] && f.Step <= s.Ends[i] {
				turn = i + 1
			}
		}
		if turn == 0 {
			panic(fmt.Sprintf("failure %s: step %d is in no prompt", f.ID, f.Step))
		}
		out.Facts = append(out.Facts, ctxceval.Fact{ID: f.ID, Kind: ctxceval.FactErrorCode, Text: f.ID, Turn: turn})
	}
	raw, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(raw, '\n')
}

// recordHeldOutSession runs one CLI through the session's prompts straight
// to the scripted model and returns the session file the CLI wrote, after
// checking it: every prompt answered, every request valid, no network
// tried, no key in the file, and `ctxc eval` reads it as a session of every
// prompt.
func recordHeldOutSession(t *testing.T, cli *agentCLI, s *heldOutSession) []byte {
	modules := needAgentCLI(t, cli)
	if err := os.RemoveAll(heldOutRoot); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(heldOutRoot) })
	ws, home := filepath.Join(heldOutRoot, s.service), filepath.Join(heldOutRoot, "home")
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.writeWorkspace(t, ws)
	up := newScriptedUpstream(t, longTaskModel(s.longTaskPlan, ws))
	guard := newOfflineGuard(t)
	run := &cliRun{cli: cli, modules: modules, ws: ws, home: home, root: up.URL, guard: guard.URL}
	cli.configure(t, run)
	for i, prompt := range s.Prompts {
		pr := run.runPrompt(t, prompt, i)
		if answer := cli.answer(pr.stdout); pr.exitErr != nil || !strings.Contains(answer, s.Answers[i]) {
			t.Fatalf("prompt %d: %v; printed %q; stderr: %s", i+1, pr.exitErr, lastLines(string(pr.stdout), 3), lastLines(string(pr.stderr), 8))
		}
	}
	if tried := guard.tried(); len(tried) > 0 {
		t.Fatalf("the CLI tried to reach %v", tried)
	}
	loops := 0
	for i, r := range up.requests() {
		switch {
		case r.Invalid != "" && cli == geminiCLI && strings.Contains(r.Invalid, "functionResponse(s)"):
			// Gemini CLI's own: a resumed session re-sends each function
			// response twice, as it does without ctxc (the long tasks'
			// direct runs show it too). The chat file is what is kept.
			t.Logf("request %d is not valid, as Gemini CLI sends it after --resume: %.200s", i, r.Invalid)
		case r.Invalid != "":
			t.Errorf("request %d is not valid: %s", i, r.Invalid)
		}
		if s.isLoop(r.Body) {
			loops++
		}
	}
	if want := s.Ends[len(s.Ends)-1] + len(s.Prompts); loops != want {
		t.Errorf("%d requests of the agent's loop, want %d (one per step and one per answer)", loops, want)
	}

	var files []string
	collect := func(root string) {
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".jsonl") {
				files = append(files, path)
			}
			return nil
		})
	}
	switch cli {
	case codexCLI:
		collect(filepath.Join(home, ".codex", "sessions"))
	case claudeCLI:
		collect(filepath.Join(home, ".claude", "projects"))
	case geminiCLI:
		collect(filepath.Join(home, ".gemini", "tmp"))
	}
	if cli == geminiCLI {
		// A resumed Gemini CLI session goes on in a file named after the
		// minute it resumed (session-<time>-<id>.jsonl, one id); read in
		// order, they are the session's one log.
		files = []string{concatSessionFiles(t, files)}
	}
	if len(files) != 1 {
		t.Fatalf("%s left %d session files %v, want the session's one", cli.name, len(files), files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(plantedKey)) {
		t.Fatalf("%s holds the API key", files[0])
	}
	session, _, err := ctxceval.LoadAny(bytes.NewReader(data), filepath.Base(files[0]), ctxceval.FormatAuto)
	if err != nil {
		t.Fatalf("ctxc eval cannot read %s: %v", files[0], err)
	}
	if n := session.Turns(); n != len(s.Prompts) {
		t.Errorf("ctxc eval reads %d user turns in %s, want %d", n, files[0], len(s.Prompts))
	}
	for i, prompt := range s.Prompts {
		if !bytes.Contains(data, jsonText(prompt)) {
			t.Errorf("%s does not hold prompt %d", files[0], i+1)
		}
	}
	return data
}

// TestHeldOutPlansCommitted keeps the plans and facts files committed
// beside the held-out sessions equal to what planHeldOutSession makes of
// their seeds, so that the facts docs/measuring.md measures with
// `ctxc eval --facts` are the ones the recorded sessions were planted with.
// The sessions themselves are only recorded again by make record-heldout;
// -update writes the facts files of their plans.
func TestHeldOutPlansCommitted(t *testing.T) {
	dir := filepath.Join(repoRoot, "examples", "transcripts", "heldout")
	for _, seed := range heldOutSessionSeeds {
		s := planHeldOutSession(seed, 40)
		for name, want := range map[string][]byte{
			fmt.Sprintf("plan-%d.json", seed):  heldOutPlanJSON(s),
			fmt.Sprintf("facts-%d.json", seed): heldOutFactsJSON(s),
		} {
			if *update && strings.HasPrefix(name, "facts-") {
				writeDump(t, dir, map[string][]byte{name: want})
			}
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is not what seed %d plans (make record-heldout records the sessions and writes it again)", name, seed)
			}
		}
	}
}

// concatSessionFiles writes Gemini CLI's files of one session, in the
// order of their names (the time each was started), into one file beside
// them and returns its path; files of more than one session are an error.
func concatSessionFiles(t *testing.T, files []string) string {
	t.Helper()
	slices.Sort(files)
	var ids []string
	var all []byte
	for _, f := range files {
		base := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		ids = append(ids, base[strings.LastIndex(base, "-")+1:])
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 0 && data[len(data)-1] != '\n' {
			data = append(data, '\n')
		}
		all = append(all, data...)
	}
	if len(files) == 0 || len(slices.Compact(slices.Clone(ids))) != 1 {
		t.Fatalf("Gemini CLI left session files %v, want those of one session", files)
	}
	out := filepath.Join(t.TempDir(), "session.jsonl")
	if err := os.WriteFile(out, all, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}
