package pipelinetest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/google/go-cmp/cmp"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/eval"
	"github.com/contextcompiler/ctxc/internal/eval/realistic"
	"github.com/contextcompiler/ctxc/internal/eval/synth"
)

// Long sessions compiled statelessly, as a runtime that keeps its own log
// does (Route without compaction, Compile of the whole state after every
// user turn): the figures of the long-sessions work (docs/ARCHITECTURE.md,
// "Compaction schedule") on generated 40-turn sessions the tuning never
// looked at (seeds 21 and 22; the README's figures use 1 to 12).
func TestLongSessionsKeepFactsWindowAndCache(t *testing.T) {
	t.Parallel() // long, and shares nothing with the other tests
	if testing.Short() {
		t.Skip("replays two 40-turn sessions through four profile and window pairs; make test runs it")
	}
	svc := testService(t)
	var sessions []*eval.Session
	for _, seed := range []uint64{21, 22} {
		s, err := synth.Generate(synth.Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
	}
	res, err := eval.Run(context.Background(), svc, sessions, eval.Options{
		Profiles: []string{"budget-aware", "policy-driven"}, Windows: []uint32{16_000, 8_000}, RouteProfile: "pragmatic",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range res.Rows {
		name := fmt.Sprintf("%s at %d", row.Profile, row.Window)
		if row.Failed != 0 {
			t.Errorf("%s: %d compiles refused (%v): a state that fits its protected messages is never refused", name, row.Failed, row.FailedCodes)
		}
		if v := *row.Valid; v != 1 {
			t.Errorf("%s: %.2f of compiles structurally valid, want all: %v", name, v, row.Violations)
		}
		recall := 0.95
		if row.Window < 16_000 {
			recall = 0.9
		}
		if got := *row.FactsKeptLast; got < recall {
			t.Errorf("%s: facts kept at the last compile %.3f, want >= %.2f", name, got, recall)
		}
		if got := *row.WindowUsedPressured; got < 0.5 {
			t.Errorf("%s: window used after compaction %.2f, want >= 0.5", name, got)
		}
		// The target is 0.85 of the append-only bound. Into 16K it holds; into
		// 8K, where compaction runs at almost every turn, stateless compiles
		// reached 0.84-0.87 while summaries shortened failures and dropped
		// conclusions to stay small; since summaries keep what identifies
		// every failure and whole conclusions (facts kept at the last compile
		// 0.94 -> 0.96 on these seeds), merges come sooner and they reach
		// 0.77-0.79 (README, "Measuring long sessions"). This floor guards
		// what is reached, not the target; the path that lets Route record
		// compaction stays above 0.9 (TestRecordedSessionsKeepFacts).
		cache := 0.85
		if row.Window < 16_000 {
			cache = 0.75
		}
		if got := *row.PrefixVsBound; got < cache {
			t.Errorf("%s: prompt-cache prefix %.3f of the append-only bound, want >= %.2f", name, got, cache)
		}
	}
}

// Consecutive stateless compiles of a growing log keep the same compacted
// prefix: when a compile reaches no compaction point the one before it did
// not, every message the one before sent is sent again, byte for byte, at the
// same place (only the end of the view may differ, where the newest turn
// arrived); and first_changed_index never points past what is really stable.
// Sent means what a provider's prompt cache reads: role, kind and parts (the
// metadata Route keeps, such as a failed step later marked resolved, is not
// sent).
func TestStatelessCompilesOnlyAppendBetweenCompactions(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a 40-turn session; make test runs it")
	}
	svc := testService(t)
	s, err := synth.Generate(synth.Options{Seed: 23, Turns: 24})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, profile := range []string{"budget-aware", "policy-driven"} {
		for _, window := range []uint32{16_000, 8_000} {
			t.Run(fmt.Sprintf("%s/%d", profile, window), func(t *testing.T) {
				st := &ctxcv1.AgentState{SchemaVersion: 1, Model: s.Header.Model, Context: &ctxcv1.AgentContext{SystemPrompt: s.Header.SystemPrompt, Tools: s.Header.Tools}}
				var prev *ctxcv1.CompileResponse
				appendOnly := 0
				for i, l := range s.Lines {
					req := proto.CloneOf(l.Route)
					req.State, req.Profile = st, "pragmatic"
					routed, err := svc.Route(ctx, req)
					if err != nil {
						t.Fatalf("line %d: Route: %v", i+2, err)
					}
					st = routed.GetState()
					if l.Route.GetUserTurn() == nil {
						continue
					}
					w := window
					out, err := svc.Compile(ctx, &ctxcv1.CompileRequest{State: st, Profile: profile, Options: &ctxcv1.CompileOptions{MaxContextTokenCount: &w}})
					if err != nil {
						t.Fatalf("line %d: Compile: %v", i+2, err)
					}
					if prev != nil && len(out.GetReport().GetCompaction().GetPoints()) == len(prev.GetReport().GetCompaction().GetPoints()) {
						appendOnly++
						// The previous compile's newest turn may have been
						// edited since (it has left the recency window): the
						// stable part is what it sent before that turn.
						stable := prev.GetReport().GetFirstChangedIndex()
						if n := uint32(len(prev.GetMessages())); stable > n || stable == 0 {
							stable = n
						}
						lastTurn := lastUserMessage(prev.GetMessages())
						upTo := min(int(stable), lastTurn)
						if len(out.GetMessages()) < upTo {
							t.Fatalf("line %d: %d messages, fewer than the %d the previous compile kept stable", i+2, len(out.GetMessages()), upTo)
						}
						if diff := cmp.Diff(sentContent(prev.GetMessages()[:upTo]), sentContent(out.GetMessages()[:upTo]), protocmp.Transform()); diff != "" {
							t.Fatalf("line %d: no compaction point was added, yet the first %d messages changed (-before +now):\n%s", i+2, upTo, diff)
						}
					}
					prev = out
				}
				if appendOnly == 0 {
					t.Fatal("no pair of compiles without a new compaction point: the session never let the context grow")
				}
			})
		}
	}
}

// lastUserMessage is the index of the last user message that opens a turn.
func lastUserMessage(msgs []*ctxcv1.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].GetRole() == ctxcv1.Role_ROLE_USER && msgs[i].GetKind() == ctxcv1.MessageKind_MESSAGE_KIND_UNSPECIFIED {
			return i
		}
	}
	return len(msgs)
}

// sentContent keeps what a provider reads of each message: role, kind, parts.
func sentContent(msgs []*ctxcv1.Message) []*ctxcv1.Message {
	out := make([]*ctxcv1.Message, len(msgs))
	for i, m := range msgs {
		out[i] = &ctxcv1.Message{Role: m.GetRole(), Kind: m.GetKind(), Parts: m.GetParts()}
	}
	return out
}

// A 200-turn session (about 1,450 messages and 660K tokens) driven through
// Route, which records compaction when an execution ends, keeps every fact of
// every turn in the compiled context: summaries stack and merge, and no merge
// loses a fact, however many compactions the session goes through.
func TestTwoHundredTurnRouteSessionKeepsEveryFact(t *testing.T) {
	t.Parallel() // long, and shares nothing with the other tests
	if testing.Short() {
		t.Skip("replays a 200-turn session; make test runs it")
	}
	svc := testService(t)
	s, err := synth.Generate(synth.Options{Seed: 5, Turns: 200})
	if err != nil {
		t.Fatal(err)
	}
	res, err := eval.Run(context.Background(), svc, []*eval.Session{s}, eval.Options{
		Profiles: []string{"budget-aware", "policy-driven"}, Windows: []uint32{128_000},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range res.Rows {
		if row.Failed != 0 || *row.Valid != 1 {
			t.Errorf("%s: %d refused (%v), %.2f valid: %v", row.Profile, row.Failed, row.FailedCodes, *row.Valid, row.Violations)
		}
		if row.PressuredCompiles < 100 {
			t.Errorf("%s: only %d compiles under pressure: the session should need compaction for most of its turns", row.Profile, row.PressuredCompiles)
		}
		if got := *row.FactsKeptLast; got != 1 {
			var missing []string
			for _, c := range res.Compiles {
				if c.Profile == row.Profile {
					missing = c.Missing
				}
			}
			t.Errorf("%s: the last compile keeps %.3f of the facts; missing %v", row.Profile, got, missing)
		}
	}
}

// Sessions of real tool output: every tool result a real command printed
// (eval/corpus), every rule, decision and remark a person's own wording.
// Seeds 31 to 33 are held out: the summarizer was tuned on 1 to 12. Through
// Route as a runtime drives it, each profile keeps at least 0.97 of the facts
// into 16K and 0.95 into 8K (the mean over compiles), every compile valid and
// none refused; llm-assisted without a model keeps no less than budget-aware.
func TestRecordedSessionsKeepFacts(t *testing.T) {
	t.Parallel() // long, and shares nothing with the other tests
	if testing.Short() {
		t.Skip("replays three 40-turn sessions through three profiles and two windows; make test runs it")
	}
	svc := testService(t)
	var sessions []*eval.Session
	for _, seed := range []uint64{31, 32, 33} {
		s, err := realistic.Generate(realistic.Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
	}
	res, err := eval.Run(context.Background(), svc, sessions, eval.Options{
		Profiles: []string{"budget-aware", "policy-driven", "llm-assisted"}, Windows: []uint32{16_000, 8_000},
	})
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]float64{}
	for _, row := range res.Rows {
		name := fmt.Sprintf("%s at %d", row.Profile, row.Window)
		kept[name] = *row.FactsKept
		if row.Failed != 0 {
			t.Errorf("%s: %d compiles refused (%v)", name, row.Failed, row.FailedCodes)
		}
		if v := *row.Valid; v != 1 {
			t.Errorf("%s: %.2f of compiles structurally valid, want all: %v", name, v, row.Violations)
		}
		want := 0.97
		if row.Window < 16_000 {
			want = 0.95
		}
		if got := *row.FactsKept; got < want {
			t.Errorf("%s: facts kept %.3f, want >= %.2f", name, got, want)
		}
		if got := *row.WindowUsedPressured; got < 0.5 {
			t.Errorf("%s: window used after compaction %.2f, want >= 0.5", name, got)
		}
		// Real outputs are large (a file read of 10K tokens, a verbose test
		// run): into 16K these sessions reach 0.89-0.90, as they did before
		// summaries kept every failure (0.86-0.89 then).
		if got := *row.PrefixVsBound; got < 0.85 {
			t.Errorf("%s: prompt-cache prefix %.3f of the append-only bound, want >= 0.85", name, got)
		}
	}
	for _, w := range []int{16_000, 8_000} {
		llm, budget := kept[fmt.Sprintf("llm-assisted at %d", w)], kept[fmt.Sprintf("budget-aware at %d", w)]
		if llm < budget {
			t.Errorf("at %d llm-assisted without a model keeps %.3f of the facts, less than budget-aware's %.3f", w, llm, budget)
		}
	}
}

// TestLongRecordedSessionKeepsFacts: 120 turns of recorded real output
// (seed 43, which the summarizer was never tuned on; about 300 facts, more
// than the summaries' share of a 16K window holds verbatim at the end) keep
// at least 0.95 of their facts over their compiles under the profiles that
// compact without a model.
func TestLongRecordedSessionKeepsFacts(t *testing.T) {
	t.Parallel() // long, and shares nothing with the other tests
	if testing.Short() {
		t.Skip("replays a 120-turn session through two profiles; make test runs it")
	}
	s, err := realistic.Generate(realistic.Options{Seed: 43, Turns: 120})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Header.Facts) < 250 {
		t.Fatalf("the session plants %d facts, want the ~300 of a long real session", len(s.Header.Facts))
	}
	res, err := eval.Run(context.Background(), testService(t), []*eval.Session{s}, eval.Options{
		Profiles: []string{"budget-aware", "policy-driven"}, Windows: []uint32{16_000},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range res.Rows {
		if row.Failed != 0 {
			t.Errorf("%s: %d compiles refused (%v)", row.Profile, row.Failed, row.FailedCodes)
		}
		if got := *row.FactsKept; got < 0.95 {
			t.Errorf("%s: facts kept %.3f over 120 turns into 16K, want >= 0.95", row.Profile, got)
		}
		if got := *row.PrefixVsBound; got < 0.9 {
			t.Errorf("%s: prompt-cache prefix %.3f of the append-only bound, want >= 0.9", row.Profile, got)
		}
	}
}

// TestNoCompileDropsASummaryWhole: over 120 recorded turns into 16K, a fact
// a compile leaves out stays out, bar the few a later merge reads back from
// a summary's shortened copy; a compile that lost the facts of a whole
// summary and the next that showed them again (a newest turn larger than
// the fifth the summaries leave it, and truncate dropping the merged summary
// to fit) sent the model a context missing what it still had. Seed 42 lost
// 75 facts at turn 71 that way under policy-driven.
func TestNoCompileDropsASummaryWhole(t *testing.T) {
	t.Parallel() // long, and shares nothing with the other tests
	if testing.Short() {
		t.Skip("replays a 120-turn session; make test runs it")
	}
	s, err := realistic.Generate(realistic.Options{Seed: 42, Turns: 120})
	if err != nil {
		t.Fatal(err)
	}
	res, err := eval.Run(context.Background(), testService(t), []*eval.Session{s}, eval.Options{
		Profiles: []string{"policy-driven"}, Windows: []uint32{16_000},
	})
	if err != nil {
		t.Fatal(err)
	}
	const back = 10 // facts a compile may miss and the next show again
	for i := 1; i < len(res.Compiles); i++ {
		prev, cur := res.Compiles[i-1], res.Compiles[i]
		returned := 0
		for _, id := range prev.Missing {
			if !slices.Contains(cur.Missing, id) {
				returned++
			}
		}
		if returned > back {
			t.Errorf("turn %d left out %d facts (of %d) that turn %d kept again", prev.Turn, returned, prev.FactsDue, cur.Turn)
		}
	}
}

// Generated sessions are valid Route logs: replayed through the real service
// with every built-in profile, no Route fails, every compile is structurally
// valid, and a compile fails only as irreducible.
func TestGeneratedSessionsReplayThroughTheService(t *testing.T) {
	t.Parallel() // long, and shares nothing with the other tests
	if testing.Short() {
		t.Skip("replays three generated sessions through three profiles after every step; make test runs it")
	}
	svc := testService(t)
	var sessions []*eval.Session
	for _, seed := range []uint64{11, 12, 13} {
		s, err := synth.Generate(synth.Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
	}
	res, err := eval.Run(context.Background(), svc, sessions, eval.Options{Profiles: []string{"pragmatic", "budget-aware", "policy-driven"}, Windows: []uint32{16_000}, EveryStep: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Compiles {
		if c.Code != "" && c.Code != "ResourceExhausted" {
			t.Errorf("%s %s line %d: %s %s", c.Session, c.Profile, c.Line, c.Code, c.Error)
		}
		for _, v := range c.Violations {
			t.Errorf("%s %s line %d: %s", c.Session, c.Profile, c.Line, v)
		}
	}
	if len(res.Compiles) < 3*3*150 {
		t.Errorf("only %d compiles: --every-step should compile after every step", len(res.Compiles))
	}
}
