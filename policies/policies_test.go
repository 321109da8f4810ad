package policies_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/policies"
)

func msg(id string, role policies.Role, parts ...policies.Part) policies.Message {
	return policies.Message{ID: id, Role: role, Parts: parts}
}

func call(id string) policies.Part {
	return policies.Part{Kind: policies.PartToolCall, ToolCall: policies.ToolCall{ID: id, Name: "grep"}}
}

func result(id string) policies.Part {
	return policies.Part{Kind: policies.PartToolResult, ToolResult: policies.ToolResult{ToolCallID: id, Content: "ok"}}
}

func text(s string) policies.Part { return policies.TextPart(s) }

func kind(m policies.Message, k policies.MessageKind) policies.Message {
	m.Kind = k
	return m
}

// session is a log of three turns: a task with a tool round, an event, a
// summary, a second turn answered in text, and a third turn whose two calls
// are answered by two tool messages.
func session() []policies.Entry {
	return policies.EntriesFromLog([]policies.Message{
		msg("u1", policies.RoleUser, text("fix the test")), // 0
		msg("a1", policies.RoleAssistant, text("looking"), call("c1")),
		msg("t1", policies.RoleTool, result("c1")),
		kind(msg("e1", policies.RoleUser, text("[event] CI finished")), policies.KindEvent),
		kind(msg("s1", policies.RoleUser, text("summary")), policies.KindSummary),
		msg("a2", policies.RoleAssistant, text("done")), // 5
		msg("u2", policies.RoleUser, text("thanks; and the lint?")),
		msg("a3", policies.RoleAssistant, text("clean")),
		msg("u3", policies.RoleUser, text("run both")),
		msg("a4", policies.RoleAssistant, call("c2"), call("c3")),
		msg("t2", policies.RoleTool, result("c2")), // 10
		msg("t3", policies.RoleTool, result("c3")),
		msg("a5", policies.RoleAssistant, text("both pass")),
	})
}

func TestEntriesFromLog(t *testing.T) {
	log := []policies.Message{msg("m1", policies.RoleUser, text("a")), msg("m2", policies.RoleAssistant, text("b"))}
	want := []policies.Entry{{Message: log[0], SourceID: "m1", LogPos: 1}, {Message: log[1], SourceID: "m2", LogPos: 2}}
	if diff := cmp.Diff(want, policies.EntriesFromLog(log)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := policies.EntriesFromLog(nil); len(got) != 0 {
		t.Errorf("EntriesFromLog(nil) = %v", got)
	}
}

func TestUnits(t *testing.T) {
	tests := []struct {
		name    string
		entries []policies.Entry
		want    []policies.Span
	}{
		{"empty", nil, []policies.Span{}},
		{"a session", session(), []policies.Span{
			{0, 1}, {1, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 9}, {9, 12}, {12, 13},
		}},
		{"calls without results stand alone", policies.EntriesFromLog([]policies.Message{
			msg("a", policies.RoleAssistant, call("c")), msg("u", policies.RoleUser, text("?")),
		}), []policies.Span{{0, 1}, {1, 2}}},
		{"tool messages after a text answer are their own units", policies.EntriesFromLog([]policies.Message{
			msg("a", policies.RoleAssistant, text("hi")), msg("t", policies.RoleTool, result("c")),
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
	noTask := policies.EntriesFromLog([]policies.Message{
		kind(msg("e", policies.RoleUser, text("event")), policies.KindEvent), msg("a", policies.RoleAssistant, text("hi")),
	})
	tests := []struct {
		name    string
		entries []policies.Entry
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
		m                             policies.Message
		turnStart, toolTrace, anyCall bool
		text                          string
	}{
		{"user text", msg("u", policies.RoleUser, text("a"), text("b")), true, false, false, "a\nb"},
		{"user event", kind(msg("e", policies.RoleUser, text("e")), policies.KindEvent), false, false, false, "e"},
		{"user summary", kind(msg("s", policies.RoleUser, text("s")), policies.KindSummary), false, false, false, "s"},
		{"assistant text", msg("a", policies.RoleAssistant, text("x")), false, false, false, "x"},
		{"assistant call", msg("a", policies.RoleAssistant, text("x"), call("c")), false, true, true, "x"},
		{"tool result", msg("t", policies.RoleTool, result("c")), false, true, false, ""},
		{"no parts", msg("n", policies.RoleUser), true, false, false, ""},
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

func TestStateHelpers(t *testing.T) {
	running := []struct {
		e    policies.Execution
		want bool
	}{
		{policies.Execution{ID: "e", Status: policies.ExecutionRunning}, true},
		{policies.Execution{ID: "e"}, true},
		{policies.Execution{ID: "e", Status: policies.ExecutionCompleted}, false},
		{policies.Execution{ID: "e", Status: policies.ExecutionFailed}, false},
		{policies.Execution{Status: policies.ExecutionRunning}, false},
	}
	for _, tt := range running {
		if got := tt.e.Running(); got != tt.want {
			t.Errorf("%+v.Running() = %v, want %v", tt.e, got, tt.want)
		}
	}
	if got := (policies.Usage{InputTokens: 100, CachedInputTokens: 20, OutputTokens: 3}).Total(); got != 123 {
		t.Errorf("Usage.Total = %d, want 123", got)
	}
	if diff := cmp.Diff(policies.Part{Kind: policies.PartText, Text: "hi"}, policies.TextPart("hi")); diff != "" {
		t.Errorf("TextPart (-want +got):\n%s", diff)
	}
}

func TestNames(t *testing.T) {
	got := []string{
		policies.RoleUnspecified.String(), policies.RoleSystem.String(), policies.RoleTool.String(), policies.Role(9).String(),
		policies.KindRegular.String(), policies.KindPlaceholder.String(), policies.MessageKind(7).String(),
		policies.PartUnspecified.String(), policies.PartReasoning.String(), policies.PartKind(8).String(),
		policies.StageNormalize.String(), policies.StagePlan.String(), policies.StageRender.String(), policies.Stage(0).String(), policies.Stage(42).String(),
	}
	want := []string{
		"unspecified", "system", "tool", "role(9)",
		"regular", "placeholder", "kind(7)",
		"unspecified", "reasoning", "part(8)",
		"normalize", "plan", "render", "stage(0)", "stage(42)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestErrorMessages(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&policies.InvalidArgumentError{Reason: policies.ReasonInvalidState, Violations: []policies.FieldViolation{
			{Field: "state.model.name", Description: "required"}, {Field: "options.view", Description: "unknown view 9"}}},
			"invalid_state: state.model.name: required; options.view: unknown view 9"},
		{&policies.UnknownProfileError{Name: "fast", Known: []string{"budget-aware", "pragmatic"}}, `unknown profile "fast" (known: budget-aware, pragmatic)`},
		{&policies.UnknownModelError{Field: "model", Model: "gpt-9"},
			`unknown model "gpt-9": set state.model.context_window_token_count, use a registered model name, or add the model to the config file's model_registry (name, provider, encoding, estimator, context_window; see examples/profiles.yaml)`},
		{&policies.IrreducibleError{NeededTokens: 9000, AvailableTokens: 8000, Detail: "pinned messages"}, "context irreducible: needs 9000 tokens, 8000 available: pinned messages"},
		{&policies.LimitError{Field: "state.context.messages", Limit: 10, Got: 11}, "state.context.messages: 11 exceeds the limit of 10"},
		{&policies.PreconditionError{Reason: policies.ReasonProviderMismatch, Field: "model.provider", Detail: "locked to openai"}, "model.provider: locked to openai"},
		{&policies.UnavailableError{Backend: "summarizer", Detail: "connection refused"}, "summarizer unavailable: connection refused"},
		{fmt.Errorf("stage compact: %w", policies.ErrInvariant), "stage compact: invariant violated"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%T.Error() = %q, want %q", tt.err, got, tt.want)
		}
	}
	if !errors.Is(fmt.Errorf("stage compact: %w", policies.ErrInvariant), policies.ErrInvariant) {
		t.Error("a wrapped ErrInvariant is not found by errors.Is")
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
