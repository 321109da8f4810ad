package policies_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

func msg(id string, role agentstate.Role, parts ...agentstate.Part) agentstate.Message {
	return agentstate.Message{ID: id, Role: role, Parts: parts}
}

func call(id string) agentstate.Part {
	return agentstate.Part{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: id, Name: "grep"}}
}

func result(id string) agentstate.Part {
	return agentstate.Part{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: id, Content: "ok"}}
}

func text(s string) agentstate.Part { return agentstate.TextPart(s) }

func kind(m agentstate.Message, k agentstate.MessageKind) agentstate.Message {
	m.Kind = k
	return m
}

// session is a log of three turns: a task with a tool round, an event, a
// summary, a second turn answered in text, and a third turn whose two calls
// are answered by two tool messages.
func session() []agentstate.Entry {
	return agentstate.EntriesFromLog([]agentstate.Message{
		msg("u1", agentstate.RoleUser, text("fix the test")), // 0
		msg("a1", agentstate.RoleAssistant, text("looking"), call("c1")),
		msg("t1", agentstate.RoleTool, result("c1")),
		kind(msg("e1", agentstate.RoleUser, text("[event] CI finished")), agentstate.KindEvent),
		kind(msg("s1", agentstate.RoleUser, text("summary")), agentstate.KindSummary),
		msg("a2", agentstate.RoleAssistant, text("done")), // 5
		msg("u2", agentstate.RoleUser, text("thanks; and the lint?")),
		msg("a3", agentstate.RoleAssistant, text("clean")),
		msg("u3", agentstate.RoleUser, text("run both")),
		msg("a4", agentstate.RoleAssistant, call("c2"), call("c3")),
		msg("t2", agentstate.RoleTool, result("c2")), // 10
		msg("t3", agentstate.RoleTool, result("c3")),
		msg("a5", agentstate.RoleAssistant, text("both pass")),
	})
}

func TestUnits(t *testing.T) {
	tests := []struct {
		name    string
		entries []agentstate.Entry
		want    []policies.Span
	}{
		{"empty", nil, []policies.Span{}},
		{"a session", session(), []policies.Span{
			{0, 1}, {1, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 9}, {9, 12}, {12, 13},
		}},
		{"calls without results stand alone", agentstate.EntriesFromLog([]agentstate.Message{
			msg("a", agentstate.RoleAssistant, call("c")), msg("u", agentstate.RoleUser, text("?")),
		}), []policies.Span{{0, 1}, {1, 2}}},
		{"tool messages after a text answer are their own units", agentstate.EntriesFromLog([]agentstate.Message{
			msg("a", agentstate.RoleAssistant, text("hi")), msg("t", agentstate.RoleTool, result("c")),
		}), []policies.Span{{0, 1}, {1, 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := policies.Units(tt.entries)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			covered := 0
			for _, u := range got {
				covered += u.Len()
			}
			if covered != len(tt.entries) {
				t.Errorf("units cover %d of %d entries", covered, len(tt.entries))
			}
		})
	}
}

func TestTurns(t *testing.T) {
	entries := session()
	if diff := cmp.Diff([]int{0, 6, 8}, policies.TurnStarts(entries)); diff != "" {
		t.Errorf("TurnStarts (-want +got):\n%s", diff)
	}
	noTask := agentstate.EntriesFromLog([]agentstate.Message{
		kind(msg("e", agentstate.RoleUser, text("event")), agentstate.KindEvent), msg("a", agentstate.RoleAssistant, text("hi")),
	})
	tests := []struct {
		name    string
		entries []agentstate.Entry
		n       int
		want    int
	}{
		{"no turn asked", entries, 0, len(entries)},
		{"negative is none", entries, -1, len(entries)},
		{"the latest turn", entries, 1, 8},
		{"the latest two", entries, 2, 6},
		{"as many as there are", entries, 3, 0},
		{"more than there are", entries, 9, 0},
		{"a log without a turn", noTask, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := policies.RecentStart(tt.entries, tt.n); got != tt.want {
				t.Errorf("RecentStart(%d) = %d, want %d", tt.n, got, tt.want)
			}
		})
	}
	if got := policies.FirstTask(entries); got != 0 {
		t.Errorf("FirstTask = %d, want 0", got)
	}
	if got := policies.FirstTask(noTask); got != -1 {
		t.Errorf("FirstTask of a log without a turn = %d, want -1", got)
	}
}

func TestMessagePredicates(t *testing.T) {
	tests := []struct {
		name                          string
		m                             agentstate.Message
		turnStart, toolTrace, anyCall bool
		text                          string
	}{
		{"user text", msg("u", agentstate.RoleUser, text("a"), text("b")), true, false, false, "a\nb"},
		{"user event", kind(msg("e", agentstate.RoleUser, text("e")), agentstate.KindEvent), false, false, false, "e"},
		{"user summary", kind(msg("s", agentstate.RoleUser, text("s")), agentstate.KindSummary), false, false, false, "s"},
		{"assistant text", msg("a", agentstate.RoleAssistant, text("x")), false, false, false, "x"},
		{"assistant call", msg("a", agentstate.RoleAssistant, text("x"), call("c")), false, true, true, "x"},
		{"tool result", msg("t", agentstate.RoleTool, result("c")), false, true, false, ""},
		{"no parts", msg("n", agentstate.RoleUser), true, false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := []any{policies.IsTurnStart(&tt.m), policies.IsToolTrace(&tt.m), tt.m.HasToolCalls(), tt.m.Text()}
			if diff := cmp.Diff([]any{tt.turnStart, tt.toolTrace, tt.anyCall, tt.text}, got); diff != "" {
				t.Errorf("[IsTurnStart, IsToolTrace, HasToolCalls, Text] (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStageNames(t *testing.T) {
	got := []string{policies.StageNormalize.String(), policies.StagePlan.String(), policies.StageRender.String(), policies.Stage(0).String(), policies.Stage(42).String()}
	want := []string{"normalize", "plan", "render", "stage(0)", "stage(42)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// factory is a minimal policy factory for the registry tests.
type factory struct {
	typ   string
	stage policies.Stage
}

type noConfig struct{}

func (noConfig) Validate() error { return nil }

type noop struct{}

func (noop) Apply(context.Context, *policies.Work) error { return nil }

func (f factory) Type() string                         { return f.typ }
func (f factory) Stage() policies.Stage                { return f.stage }
func (f factory) CreateDefaultConfig() policies.Config { return noConfig{} }
func (f factory) Create(policies.Config) (policies.Policy, error) {
	return noop{}, nil
}

func TestRegistry(t *testing.T) {
	reg, err := policies.NewRegistry(factory{"truncate", policies.StageCompact}, factory{"normalize", policies.StageNormalize}, factory{"render", policies.StageRender})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"normalize", "render", "truncate"}, reg.Types()); diff != "" {
		t.Errorf("Types (-want +got):\n%s", diff)
	}
	if f, ok := reg.Factory("truncate"); !ok || f.Stage() != policies.StageCompact {
		t.Errorf("Factory(truncate) = %v, %v", f, ok)
	}
	if _, ok := reg.Factory("nope"); ok {
		t.Error("Factory(nope) found a factory")
	}
	for _, tt := range []struct {
		name      string
		factories []policies.Factory
		want      string
	}{
		{"duplicate type", []policies.Factory{factory{"dedupe", policies.StageCompact}, factory{"dedupe", policies.StageIsolate}}, `policy type "dedupe" registered twice`},
		{"empty type", []policies.Factory{factory{"", policies.StageBudget}}, "factory for stage budget has an empty type"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := policies.NewRegistry(tt.factories...)
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	empty, err := policies.NewRegistry()
	if err != nil || len(empty.Types()) != 0 {
		t.Errorf("an empty registry: %v, %v", empty.Types(), err)
	}
}

// longTask is one prompt an agent works through with three tool calls, the
// last still waiting for the model: a CLI's environment block, the user's
// instruction, a call answered by two results, what the assistant said,
// another call, a summary ctxc wrote of earlier steps, and the newest call.
func longTask() []agentstate.Entry {
	return agentstate.EntriesFromLog([]agentstate.Message{
		msg("env", agentstate.RoleUser, text("<environment_context>\n  <cwd>/ws</cwd>\n</environment_context>")), // 0
		msg("u", agentstate.RoleUser, text("<system-reminder>be brief</system-reminder>\nMake the tests pass; never edit vendor/.")),
		msg("a1", agentstate.RoleAssistant, call("c1"), call("c2")),
		msg("t1", agentstate.RoleTool, result("c1")),
		msg("t2", agentstate.RoleTool, result("c2")),
		msg("a2", agentstate.RoleAssistant, text("The build is broken; looking at the parser.")), // 5
		msg("a3", agentstate.RoleAssistant, call("c3")),
		msg("t3", agentstate.RoleTool, result("c3")),
		kind(msg("s", agentstate.RoleUser, text("summary of steps")), agentstate.KindSummary),
		msg("a4", agentstate.RoleAssistant, call("c4")),
		msg("t4", agentstate.RoleTool, result("c4")), // 10
	})
}

func TestTaskHistory(t *testing.T) {
	task := longTask()
	tests := []struct {
		name        string
		entries     []agentstate.Entry
		recentTurns int
		want        policies.Span
	}{
		{"everything after the instruction before the newest call", task, 1, policies.Span{Start: 2, End: 9}},
		{"the same with a wider recency window", task, 3, policies.Span{Start: 2, End: 9}},
		{"nothing is recent", task, 0, policies.Span{}},
		{"one call is no history", task[:5], 1, policies.Span{}},
		{"an answered task is kept whole", append(append([]agentstate.Entry(nil), task...),
			agentstate.EntriesFromLog([]agentstate.Message{msg("a5", agentstate.RoleAssistant, text("done"))})...), 1, policies.Span{}},
		{"a call waiting for its result", task[:10], 1, policies.Span{Start: 2, End: 9}},
		{"a new prompt starts a task without history", append(append([]agentstate.Entry(nil), task...),
			agentstate.EntriesFromLog([]agentstate.Message{msg("u2", agentstate.RoleUser, text("now the docs"))})...), 1, policies.Span{}},
		{"a session of short turns", session(), 1, policies.Span{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := policies.TaskHistory(tt.entries, tt.recentTurns)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for i := got.Start; i < got.End; i++ {
				if policies.IsTurnStart(&tt.entries[i].Message) {
					t.Errorf("the history holds the turn start %s", tt.entries[i].Message.ID)
				}
			}
		})
	}
}

func TestInstruction(t *testing.T) {
	task := longTask()
	if got := policies.Instruction(task); got != 1 {
		t.Errorf("Instruction = %d, want 1 (the user's words, not the CLI's environment)", got)
	}
	reminder := append(append([]agentstate.Entry(nil), task...), agentstate.EntriesFromLog([]agentstate.Message{
		msg("r", agentstate.RoleUser, text("<system-reminder>\nThe todo list is empty.\n</system-reminder>")),
	})...)
	if got := policies.Instruction(reminder); got != 1 {
		t.Errorf("Instruction after a reminder the CLI sent as a user message = %d, want 1", got)
	}
	if got := policies.Instruction(task[:1]); got != -1 {
		t.Errorf("Instruction of a log of CLI blocks = %d, want -1", got)
	}
	for _, tt := range []struct {
		text string
		want bool
	}{
		{"fix it", true},
		{"<environment_context><cwd>/ws</cwd></environment_context>", false},
		{"  <a>x</a>\n<b-c_2 attr=\"1\">y</b-c_2>  ", false},
		{"<system-reminder>r</system-reminder> and then fix the parser", true},
		{"<unclosed> fix it", true},
		{"x < y but <b>z</b>", true},
		{"<3 tests>", true},
		{"", false},
	} {
		if got := policies.PersonsWords(tt.text); got != tt.want {
			t.Errorf("PersonsWords(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestCompactionPointsBetweenSteps(t *testing.T) {
	// A turn of ten steps, then a new prompt with three: the steps of a
	// long task end at a compaction point from the LongTaskSteps-th on,
	// the few steps of an ordinary turn do not; never between a call and
	// its results.
	log := []agentstate.Message{msg("u1", agentstate.RoleUser, text("make the tests pass"))}
	step := func(k int, results int) {
		a := msg(fmt.Sprintf("a%d", k), agentstate.RoleAssistant)
		for r := 0; r < results; r++ {
			a.Parts = append(a.Parts, call(fmt.Sprintf("c%d-%d", k, r)))
		}
		log = append(log, a)
		for r := 0; r < results; r++ {
			log = append(log, msg(fmt.Sprintf("t%d-%d", k, r), agentstate.RoleTool, result(fmt.Sprintf("c%d-%d", k, r))))
		}
	}
	for k := 1; k <= 10; k++ {
		step(k, 1+k%2) // odd steps call two tools at once
	}
	log = append(log, msg("u2", agentstate.RoleUser, text("now the docs")))
	for k := 11; k <= 13; k++ {
		step(k, 1)
	}
	entries := agentstate.EntriesFromLog(log)
	// u1 opens the log; step 8 ends before a9 (21), step 9 before a10 (24),
	// step 10 before u2 (26), which opens a turn (27) of three steps.
	want := []int{1, 21, 24, 26, 27}
	if policies.LongTaskSteps != 8 {
		t.Fatalf("the expected points assume LongTaskSteps 8, not %d", policies.LongTaskSteps)
	}
	if diff := cmp.Diff(want, policies.CompactionPoints(entries)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
