package synth

import (
	"bytes"
	"reflect"
	"strings"
	"sync"
	"testing"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/eval"
)

var seeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8}

// defaults caches the sessions of default options by seed: several tests
// read them, none changes them.
var defaults sync.Map

func generate(t *testing.T, opts Options) *eval.Session {
	t.Helper()
	plain := opts.Count == nil && reflect.DeepEqual(opts, Options{Seed: opts.Seed})
	if s, ok := defaults.Load(opts.Seed); ok && plain {
		return s.(*eval.Session)
	}
	s, err := Generate(opts)
	if err != nil {
		t.Fatal(err)
	}
	if plain {
		defaults.Store(opts.Seed, s)
	}
	return s
}

func written(t *testing.T, s *eval.Session) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := eval.Write(&buf, s); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGenerateIsDeterministic(t *testing.T) {
	a := written(t, generate(t, Options{Seed: 7}))
	b := written(t, generate(t, Options{Seed: 7}))
	if !bytes.Equal(a, b) {
		t.Fatal("two sessions of seed 7 differ")
	}
	if c := written(t, generate(t, Options{Seed: 8})); bytes.Equal(a, c) {
		t.Fatal("seeds 7 and 8 give the same session")
	}
}

// The written session is a valid session file: it loads, and every fact
// passes the loader's check that its text occurs in the session.
func TestGeneratedSessionsLoad(t *testing.T) {
	for _, seed := range seeds[:3] {
		s := generate(t, Options{Seed: seed})
		if _, err := eval.Load(bytes.NewReader(written(t, s)), "generated"); err != nil {
			t.Errorf("seed %d: %v", seed, err)
		}
	}
}

// messages flattens what a session routes, with the user turn of each.
type routed struct {
	turn int
	m    *ctxcv1.Message
	step *ctxcv1.AgentStep
}

func flatten(s *eval.Session) []routed {
	var out []routed
	turn := 0
	for _, l := range s.Lines {
		switch {
		case l.Route.GetUserTurn() != nil:
			turn++
			for _, m := range l.Route.GetUserTurn().GetMessages() {
				out = append(out, routed{turn: turn, m: m})
			}
		case l.Route.GetStep() != nil:
			for _, m := range l.Route.GetStep().GetMessages() {
				out = append(out, routed{turn: turn, m: m, step: l.Route.GetStep()})
			}
			if e := l.Route.GetStep().GetError(); e != "" {
				out = append(out, routed{turn: turn, m: textMessage(ctxcv1.Role_ROLE_USER, e), step: l.Route.GetStep()})
			}
		case l.Route.GetEvent() != nil:
			out = append(out, routed{turn: turn, m: textMessage(ctxcv1.Role_ROLE_USER, l.Route.GetEvent().GetText())})
		}
	}
	return out
}

func text(m *ctxcv1.Message) string {
	var b strings.Builder
	for _, p := range m.GetParts() {
		b.WriteString(p.GetText() + p.GetReasoning().GetText() + p.GetToolCall().GetArgumentsJson() + p.GetToolResult().GetContent() + "\n")
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

func TestSizesAreInTheStatedRanges(t *testing.T) {
	estimate := DefaultOptions(0).Count
	var outputs []int
	for _, seed := range seeds {
		s := generate(t, Options{Seed: seed})
		if got := s.Turns(); got != 40 {
			t.Errorf("seed %d: %d turns, want 40", seed, got)
		}
		if size := Size(s, estimate); size < 100_000 || size > 150_000 {
			t.Errorf("seed %d: %d tokens, want 100,000-150,000", seed, size)
		}
		msgs := flatten(s)
		if n := len(msgs); n < 220 || n > 340 {
			t.Errorf("seed %d: %d messages, want about 280 (220-340)", seed, n)
		}
		for _, r := range msgs {
			for _, p := range r.m.GetParts() {
				if res := p.GetToolResult(); res != nil && res.GetName() != "write_file" && res.GetName() != "apply_patch" {
					outputs = append(outputs, estimate(res.GetContent()))
				}
			}
		}
	}
	small, medium, large := 0, 0, 0
	for _, n := range outputs {
		switch {
		case n > 40_000:
			t.Errorf("a tool output of %d tokens, past the largest size (about 30K)", n)
		case n >= 20_000:
			large++
		case n >= 4_000:
			medium++
		case n <= 2_500:
			small++
		}
	}
	if share := float64(small) / float64(len(outputs)); share < 0.8 {
		t.Errorf("%.2f of %d tool outputs are small (≤ 2,500 tokens), want most (≥ 0.8)", share, len(outputs))
	}
	if medium < len(seeds) || large < 2 {
		t.Errorf("%d medium (5-15K) and %d large (~30K) outputs in %d sessions, want some and a few", medium, large, len(seeds))
	}
}

func TestOptionsChangeTheShape(t *testing.T) {
	estimate := DefaultOptions(0).Count
	short := generate(t, Options{Seed: 3, Turns: 12})
	if got := short.Turns(); got != 12 {
		t.Errorf("%d turns, want 12", got)
	}
	// The target scales with the turns: 30,000-45,000 for 12.
	if size := Size(short, estimate); size < 30_000 || size > 45_000 {
		t.Errorf("12 turns: %d tokens, want 30,000-45,000", size)
	}
	small := generate(t, Options{Seed: 3, ToolOutputs: Sizes{Small: [2]int{50, 300}}, TotalTokens: [2]int{1, 1_000_000}})
	if size := Size(small, estimate); size > 60_000 {
		t.Errorf("with small tool outputs: %d tokens, want far fewer than the default", size)
	}
	failures := func(s *eval.Session) int {
		n := 0
		for _, r := range flatten(s) {
			for _, p := range r.m.GetParts() {
				if p.GetToolResult().GetIsError() {
					n++
				}
			}
		}
		return n
	}
	if lo, hi := failures(generate(t, Options{Seed: 3, FailureRate: 0.01})), failures(generate(t, Options{Seed: 3, FailureRate: 0.4})); lo >= hi {
		t.Errorf("failure rate 0.01 gave %d failed calls, 0.4 gave %d", lo, hi)
	}
	if _, err := Generate(Options{Turns: -1, FailureRate: 2}); err == nil || !strings.Contains(err.Error(), "turns") || !strings.Contains(err.Error(), "failure_rate") {
		t.Errorf("bad options: %v, want both problems named", err)
	}
}

// Every fact's text is in the log exactly, first at the turn it names.
func TestFactsAppearFirstAtTheirTurn(t *testing.T) {
	for _, seed := range seeds {
		s := generate(t, Options{Seed: seed})
		msgs := flatten(s)
		kinds := map[eval.FactKind]int{}
		for _, f := range s.Header.Facts {
			kinds[f.Kind]++
			want := strings.Join(strings.Fields(f.Text), " ")
			first := 0
			for _, r := range msgs {
				if strings.Contains(text(r.m), want) {
					first = r.turn
					break
				}
			}
			if first != f.Turn {
				t.Errorf("seed %d: fact %s %q first appears in turn %d, not %d", seed, f.ID, f.Text, first, f.Turn)
			}
			if strings.Contains(s.Header.SystemPrompt, f.Text) {
				t.Errorf("seed %d: fact %s is in the system prompt", seed, f.ID)
			}
		}
		if kinds[eval.FactFirstTask] != 1 || kinds[eval.FactPinned] < 1 || kinds[eval.FactConstraint] < 6 || kinds[eval.FactDecision] < 3 || kinds[eval.FactErrorCode] < 5 {
			t.Errorf("seed %d: facts by kind %v, want 1 first task, pinned, ≥ 6 constraints, ≥ 3 decisions, ≥ 5 error codes", seed, kinds)
		}
	}
}

// The log is what a runtime would route: user turns first, every result
// answering a call of the same step, unique call ids, a pinned note, usage
// that grows with the prompt.
func TestRouteLogShape(t *testing.T) {
	for _, seed := range seeds[:4] {
		s := generate(t, Options{Seed: seed})
		if s.Lines[0].Route.GetUserTurn() == nil {
			t.Errorf("seed %d: the first input is not a user turn", seed)
		}
		calls := map[string]bool{}
		pinned, parallel, steps := 0, 0, 0
		lastInput := uint32(0)
		for _, l := range s.Lines {
			for _, m := range l.Route.GetUserTurn().GetMessages() {
				if m.GetPinned() {
					pinned++
				}
			}
			step := l.Route.GetStep()
			if step == nil {
				continue
			}
			steps++
			stepCalls := map[string]bool{}
			for _, m := range step.GetMessages() {
				for _, p := range m.GetParts() {
					if c := p.GetToolCall(); c != nil {
						if calls[c.GetId()] {
							t.Errorf("seed %d: call id %s used twice", seed, c.GetId())
						}
						calls[c.GetId()], stepCalls[c.GetId()] = true, true
					}
					if r := p.GetToolResult(); r != nil && !stepCalls[r.GetToolCallId()] {
						t.Errorf("seed %d line %d: result for %s, which the step did not call", seed, l.Number, r.GetToolCallId())
					}
				}
			}
			if len(stepCalls) > 1 {
				parallel++
			}
			if len(stepCalls) > 4 {
				t.Errorf("seed %d line %d: %d parallel calls, want at most 4", seed, l.Number, len(stepCalls))
			}
			switch step.GetFinishReason() {
			case ctxcv1.FinishReason_FINISH_REASON_TOOL_CALLS:
				if len(stepCalls) == 0 {
					t.Errorf("seed %d line %d: TOOL_CALLS without calls", seed, l.Number)
				}
			case ctxcv1.FinishReason_FINISH_REASON_STOP:
				if len(stepCalls) != 0 {
					t.Errorf("seed %d line %d: a final answer with calls", seed, l.Number)
				}
			case ctxcv1.FinishReason_FINISH_REASON_ERROR:
				if step.GetError() == "" {
					t.Errorf("seed %d line %d: a failed step without its error", seed, l.Number)
				}
				continue
			}
			if in := step.GetUsage().GetInputTokenCount(); in <= lastInput || step.GetUsage().GetOutputTokenCount() == 0 {
				t.Errorf("seed %d line %d: usage %v after input %d", seed, l.Number, step.GetUsage(), lastInput)
			} else {
				lastInput = in
			}
		}
		if pinned != 1 {
			t.Errorf("seed %d: %d pinned messages, want 1", seed, pinned)
		}
		if share := float64(parallel) / float64(steps); share < 0.15 || share > 0.6 {
			t.Errorf("seed %d: %.2f of steps make parallel calls, want about 0.45 of tool steps", seed, share)
		}
	}
}

// The sessions are not one pattern: across seeds the languages, tasks and
// the phrasing and placement of constraints vary.
func TestSessionsVary(t *testing.T) {
	langs, tasks, constraintStarts, firstWords := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	forms := map[string]int{}
	for _, seed := range seeds {
		s := generate(t, Options{Seed: seed})
		for _, lang := range []string{"a Go coding", "a Python coding", "a TypeScript coding"} {
			if strings.Contains(s.Header.Description, lang) {
				langs[lang] = true
			}
		}
		all := ""
		for _, r := range flatten(s) {
			all += "\n" + text(r.m)
			if r.m.GetRole() == ctxcv1.Role_ROLE_USER && r.step == nil {
				if w := strings.Fields(text(r.m)); len(w) > 0 {
					firstWords[w[0]] = true
				}
			}
		}
		for _, f := range s.Header.Facts {
			switch f.Kind {
			case eval.FactFirstTask:
				tasks[f.Text] = true
			case eval.FactConstraint:
				constraintStarts[strings.ToLower(strings.Join(strings.Fields(f.Text)[:2], " "))] = true
				switch {
				case f.Text != upperFirst(f.Text):
					forms["inside a sentence"]++
				case strings.Contains(all, "- "+f.Text):
					forms["in a list"]++
				case strings.Contains(all, "**"+f.Text):
					forms["in bold"]++
				default:
					forms["a sentence of its own"]++
				}
			}
		}
	}
	if len(langs) < 2 || len(tasks) < 6 || len(constraintStarts) < 25 || len(firstWords) < 20 {
		t.Errorf("%d languages, %d first tasks, %d ways constraints start, %d first words of user messages in %d sessions: too uniform", len(langs), len(tasks), len(constraintStarts), len(firstWords), len(seeds))
	}
	for _, form := range []string{"inside a sentence", "in a list", "in bold", "a sentence of its own"} {
		if forms[form] == 0 {
			t.Errorf("no constraint %s (forms: %v)", form, forms)
		}
	}
}
