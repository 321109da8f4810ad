package eval

import (
	"context"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

func loadTiny(t *testing.T) *Session {
	t.Helper()
	f, err := os.Open("testdata/tiny.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Load(f, "tiny.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func fptr(v float64) *float64 { return &v }

// The tiny session, worked out by hand (see fakeService for how it counts):
//
//	line 2, turn 1: m1 "fix the bug. never use cgo" (6)                  -> compile 1
//	line 3:         m2 read_file call (2), m3 result "E1234 failed" (2)
//	line 4:         m4 "done" (1)
//	line 6, turn 2: m5 "go on" (2)                                       -> compile 2
//	line 7:         m6 "I will use a mutex" (5)
//	line 8:         m7 event "CI passed" (2)
//	line 9, turn 3: m8 "thanks" (1)                                      -> compile 3
//
// The system prompt counts 4, the tools 3; the window is 100 with 25
// reserved, so 75 usable; Budget is over the soft threshold from 5 messages.
func TestRunFiguresByHand(t *testing.T) {
	type compileFigures struct {
		Line, Turn, Due, Kept, Input, Prefix, New, Used int
		Missing                                         []string
		Rules                                           []string
		Pressured, First                                bool
		Code                                            string
	}
	tests := []struct {
		name       string
		svc        *fakeService
		compiles   []compileFigures
		row        Row
		countCalls int
	}{
		{
			name: "identity keeps everything and only appends",
			svc:  &fakeService{compile: identity, toolTokens: 3},
			compiles: []compileFigures{
				{Line: 2, Turn: 1, Due: 2, Kept: 2, Input: 13, Used: 13, First: true},
				{Line: 6, Turn: 2, Due: 3, Kept: 3, Input: 20, Prefix: 13, New: 7, Used: 20, Pressured: true},
				{Line: 9, Turn: 3, Due: 4, Kept: 4, Input: 28, Prefix: 20, New: 8, Used: 28, Pressured: true},
			},
			row: Row{Compiles: 3, Valid: fptr(1), FactsKept: fptr(1), FactsKeptLast: fptr(1),
				WindowUsedPressured: fptr(48.0 / 150), PressuredCompiles: 2, WindowUsed: fptr(61.0 / 225),
				InputTokens: 48, PrefixTokens: 33, BoundTokens: 33, NewTokens: 15,
				PrefixShare: fptr(33.0 / 48), BoundShare: fptr(33.0 / 48), PrefixVsBound: fptr(1),
				BilledTokens: 15, AppendOnlyBilledTokens: 15},
			countCalls: 1, // the session's own messages, counted once up front
		},
		{
			name: "dropping the failed tool result loses its error code and unpairs the call",
			svc:  &fakeService{compile: dropping("m3"), toolTokens: 3},
			compiles: []compileFigures{
				{Line: 2, Turn: 1, Due: 2, Kept: 2, Input: 13, Used: 13, First: true},
				{Line: 6, Turn: 2, Due: 3, Kept: 2, Missing: []string{"f3"}, Rules: []string{RuleToolCall}, Input: 18, Prefix: 13, New: 5, Used: 18, Pressured: true},
				{Line: 9, Turn: 3, Due: 4, Kept: 3, Missing: []string{"f3"}, Rules: []string{RuleToolCall}, Input: 26, Prefix: 18, New: 8, Used: 26, Pressured: true},
			},
			row: Row{Compiles: 3, Valid: fptr(1.0 / 3), ViolationCount: 2, FactsKept: fptr((1 + 2.0/3 + 3.0/4) / 3), FactsKeptLast: fptr(0.75),
				WindowUsedPressured: fptr(44.0 / 150), PressuredCompiles: 2, WindowUsed: fptr(57.0 / 225),
				InputTokens: 44, PrefixTokens: 31, BoundTokens: 31, NewTokens: 13,
				PrefixShare: fptr(31.0 / 44), BoundShare: fptr(31.0 / 44), PrefixVsBound: fptr(1),
				BilledTokens: 13, AppendOnlyBilledTokens: 13},
			countCalls: 1,
		},
		{
			name: "a summary rewritten every turn loses the facts, the first task and the cache",
			svc:  &fakeService{compile: summarizing, toolTokens: 3, compacted: true},
			compiles: []compileFigures{
				{Line: 2, Turn: 1, Due: 2, Kept: 2, Input: 13, Used: 13, First: true, Pressured: true},
				{Line: 6, Turn: 2, Due: 3, Kept: 0, Missing: []string{"f1", "f2", "f3"}, Rules: []string{RuleFirstTask}, Input: 13, Prefix: 7, New: 2, Used: 13, Pressured: true},
				{Line: 9, Turn: 3, Due: 4, Kept: 0, Missing: []string{"f1", "f2", "f3", "f4"}, Rules: []string{RuleFirstTask}, Input: 12, Prefix: 7, New: 1, Used: 12, Pressured: true},
			},
			row: Row{Compiles: 3, Valid: fptr(1.0 / 3), ViolationCount: 2, FactsKept: fptr(1.0 / 3), FactsKeptLast: fptr(0),
				WindowUsedPressured: fptr(38.0 / 225), PressuredCompiles: 3, WindowUsed: fptr(38.0 / 225),
				InputTokens: 25, PrefixTokens: 14, BoundTokens: 22, NewTokens: 3,
				PrefixShare: fptr(14.0 / 25), BoundShare: fptr(22.0 / 25), PrefixVsBound: fptr(14.0 / 22),
				BilledTokens: 11, AppendOnlyBilledTokens: 3},
			countCalls: 3, // and each new summary
		},
		{
			name: "a failed compile is not valid, is left out of the other figures, and the next is compared with the last success",
			svc:  &fakeService{compile: identity, toolTokens: 3, failTurn: map[int]bool{2: true}},
			compiles: []compileFigures{
				{Line: 2, Turn: 1, Due: 2, Kept: 2, Input: 13, Used: 13, First: true},
				{Line: 6, Turn: 2, Code: codes.ResourceExhausted.String()},
				{Line: 9, Turn: 3, Due: 4, Kept: 4, Input: 28, Prefix: 13, New: 15, Used: 28, Pressured: true},
			},
			row: Row{Compiles: 3, Failed: 1, FailedCodes: map[string]int{"ResourceExhausted": 1},
				Failures: []SampleFailure{{Session: "tiny", Line: 6, Turn: 2, Code: "ResourceExhausted", Error: "context irreducible"}},
				Valid:    fptr(2.0 / 3), FactsKept: fptr(1), FactsKeptLast: fptr(1),
				WindowUsedPressured: fptr(28.0 / 75), PressuredCompiles: 1, WindowUsed: fptr(41.0 / 150),
				InputTokens: 28, PrefixTokens: 13, BoundTokens: 13, NewTokens: 15,
				PrefixShare: fptr(13.0 / 28), BoundShare: fptr(13.0 / 28), PrefixVsBound: fptr(1),
				BilledTokens: 15, AppendOnlyBilledTokens: 15},
			countCalls: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(context.Background(), tt.svc, []*Session{loadTiny(t)}, Options{Profiles: []string{"fake"}, Windows: []uint32{100}, Now: tickingClock()})
			if err != nil {
				t.Fatal(err)
			}
			var got []compileFigures
			for _, c := range res.Compiles {
				var rules []string
				for _, v := range c.Violations {
					rules = append(rules, v.Rule)
				}
				got = append(got, compileFigures{Line: c.Line, Turn: c.Turn, Due: c.FactsDue, Kept: c.FactsKept, Input: c.InputTokens, Prefix: c.PrefixTokens, New: c.NewTokens, Used: c.UsedTokens,
					Missing: c.Missing, Rules: rules, Pressured: c.Pressured, First: c.First, Code: c.Code})
				if c.OK() && c.UsableTokens != 75 {
					t.Errorf("line %d: usable %d, want 75", c.Line, c.UsableTokens)
				}
			}
			if diff := cmp.Diff(tt.compiles, got); diff != "" {
				t.Errorf("compiles (-want +got):\n%s", diff)
			}
			want := tt.row
			want.Profile, want.Window, want.Sessions = "fake", 100, 1
			want.LatencyMeanMillis, want.LatencyP95Millis = fptr(1), fptr(1)
			// A millisecond a call on the ticking clock: the compiles at
			// lines 2, 6 and 9 follow 1, 3 and 3 Route calls.
			want.RouteMeanMillis = fptr(7.0 / 3)
			if diff := cmp.Diff(want, res.Rows[0], cmpopts.EquateApprox(0, 1e-12), cmpopts.IgnoreFields(Row{}, "Violations")); diff != "" {
				t.Errorf("row (-want +got):\n%s", diff)
			}
			if len(res.Rows[0].Violations) != want.ViolationCount {
				t.Errorf("listed violations %v, want %d", res.Rows[0].Violations, want.ViolationCount)
			}
			if tt.svc.countCalls != tt.countCalls {
				t.Errorf("CountTokens called %d times, want %d (each distinct content once)", tt.svc.countCalls, tt.countCalls)
			}
		})
	}
}

func TestRunDescribesTheSession(t *testing.T) {
	res, err := Run(context.Background(), &fakeService{compile: identity}, []*Session{loadTiny(t)}, Options{Profiles: []string{"fake"}, Windows: []uint32{100}})
	if err != nil {
		t.Fatal(err)
	}
	// 8 messages of 6+2+2+1+2+5+2+1 words, and the system prompt's 4.
	want := []SessionInfo{{ID: "tiny", Name: "tiny.jsonl", Turns: 3, Messages: 8, LogTokens: 25, Facts: 4, FactSource: SourceListed}}
	if diff := cmp.Diff(want, res.Sessions); diff != "" {
		t.Errorf("sessions (-want +got):\n%s", diff)
	}
}

func TestRunWithoutListedFactsFindsThem(t *testing.T) {
	s := loadTiny(t)
	s.Header.Facts = nil
	res, err := Run(context.Background(), &fakeService{compile: dropping("m3")}, []*Session{s}, Options{Profiles: []string{"fake"}, Windows: []uint32{100}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Sessions[0]; got.FactSource != SourceFound || got.Facts != 2 || got.FactKinds[FactConstraint] != 1 || got.FactKinds[FactOther] != 1 {
		t.Errorf("session facts %d (%v) from %q, want a requirement (never use cgo) and an identifier (E1234)", got.Facts, got.FactKinds, got.FactSource)
	}
	var missing [][]string
	for _, c := range res.Compiles {
		missing = append(missing, c.Missing)
	}
	// E1234 is not due before turn 2 (it comes in turn 1's tool output), then missing.
	if diff := cmp.Diff([][]string{nil, {"E1234"}, {"E1234"}}, missing); diff != "" {
		t.Errorf("missing (-want +got):\n%s", diff)
	}
}

func TestRunEveryStepCompilesAfterSteps(t *testing.T) {
	res, err := Run(context.Background(), &fakeService{compile: identity}, []*Session{loadTiny(t)}, Options{Profiles: []string{"fake"}, Windows: []uint32{100}, EveryStep: true})
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	var due []int
	for _, c := range res.Compiles {
		lines = append(lines, c.Line)
		due = append(due, c.FactsDue)
	}
	// Steps on lines 3, 4 and 7; the error code is due right after its step.
	if diff := cmp.Diff([]int{2, 3, 4, 6, 7, 9}, lines); diff != "" {
		t.Errorf("compile lines (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{2, 3, 3, 3, 4, 4}, due); diff != "" {
		t.Errorf("facts due (-want +got):\n%s", diff)
	}
}

func TestRunStateLines(t *testing.T) {
	s := loadTiny(t)
	// Replay it once to record its states, then measure the states alone.
	svc := &fakeService{compile: identity, toolTokens: 3}
	var states []Line
	r := replay{svc: svc, counter: newTokenCounter(svc), opts: &Options{Now: tickingClock()}, session: s, profile: "fake", window: 100, facts: s.Header.Facts}
	r.state = nil
	if _, err := r.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	states = append(states, Line{State: r.state, Number: 2})
	snap := &Session{Header: s.Header, Lines: states, Name: "states"}
	res, err := Run(context.Background(), svc, []*Session{snap}, Options{Profiles: []string{"fake"}, Windows: []uint32{100}})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Compiles[0]
	// The state's turn is counted from its log: three user messages.
	if c.Turn != 3 || c.FactsDue != 4 || c.FactsKept != 4 || c.InputTokens != 28 || len(c.Violations) != 0 {
		t.Errorf("state compile: %+v", c)
	}
}

func TestRunRoutesWithTheMeasuredProfileUnlessTold(t *testing.T) {
	for _, tt := range []struct{ routeProfile, want string }{{"", "fake"}, {"router", "router"}} {
		svc := &fakeService{compile: identity}
		if _, err := Run(context.Background(), svc, []*Session{loadTiny(t)}, Options{Profiles: []string{"fake"}, Windows: []uint32{100}, RouteProfile: tt.routeProfile}); err != nil {
			t.Fatal(err)
		}
		want := make([]string, 7) // 7 route lines
		for i := range want {
			want[i] = tt.want
		}
		if diff := cmp.Diff(want, svc.routedWith); diff != "" {
			t.Errorf("--route-profile %q: Route profiles (-want +got):\n%s", tt.routeProfile, diff)
		}
		if diff := cmp.Diff([]string{"fake", "fake", "fake"}, svc.compiledWith); diff != "" {
			t.Errorf("--route-profile %q: Compile profiles (-want +got):\n%s", tt.routeProfile, diff)
		}
	}
}

func TestRunNeedsProfilesAndWindows(t *testing.T) {
	for _, opts := range []Options{{Windows: []uint32{100}}, {Profiles: []string{"fake"}}, {Profiles: []string{"fake"}, Windows: []uint32{0}}} {
		if _, err := Run(context.Background(), &fakeService{compile: identity}, []*Session{loadTiny(t)}, opts); err == nil {
			t.Errorf("%+v: no error", opts)
		}
	}
}

// uncompacted is the state without the summaries and masks compaction
// recorded, every other field as it was, and leaves the state it reads.
func TestUncompacted(t *testing.T) {
	text := func(s string) []*ctxcv1.Part { return []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: s}}} }
	st := &ctxcv1.AgentState{SchemaVersion: 1, AgentId: "a", Model: &ctxcv1.ModelSpec{Name: "gpt-4o"},
		Execution: &ctxcv1.Execution{Id: "e1", StepIndex: 2},
		Context: &ctxcv1.AgentContext{SystemPrompt: "sys", ResponseFormat: "{}", Metadata: map[string]string{"k": "v"},
			Tools: []*ctxcv1.ToolDefinition{{Name: "run"}},
			Messages: []*ctxcv1.Message{
				{Id: "u1", Role: ctxcv1.Role_ROLE_USER, Parts: text("hi")},
				{Id: "t1", Role: ctxcv1.Role_ROLE_USER, Parts: text("long output"), Mask: &ctxcv1.Mask{Reason: "old", Placeholder: "[masked]"}, Pinned: true},
				{Id: "ctxc-s1", Role: ctxcv1.Role_ROLE_USER, Kind: ctxcv1.MessageKind_MESSAGE_KIND_SUMMARY, Parts: text("summary")},
				{Id: "a1", Role: ctxcv1.Role_ROLE_ASSISTANT, Parts: text("done")},
			}}}
	given := proto.CloneOf(st)
	want := proto.CloneOf(st)
	want.Context.Messages = []*ctxcv1.Message{want.Context.Messages[0], want.Context.Messages[1], want.Context.Messages[3]}
	want.Context.Messages[1].Mask = nil
	if diff := cmp.Diff(want, uncompacted(st), protocmp.Transform()); diff != "" {
		t.Errorf("uncompacted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(given, st, protocmp.Transform()); diff != "" {
		t.Errorf("the state read changed (-given +after):\n%s", diff)
	}
	plain := &ctxcv1.AgentState{Context: &ctxcv1.AgentContext{Messages: given.Context.Messages[:1]}}
	if uncompacted(plain) != plain {
		t.Error("a state with nothing compacted is not returned as it is")
	}
}
