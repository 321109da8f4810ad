package agentstate_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

func TestEntriesFromLog(t *testing.T) {
	log := []agentstate.Message{{ID: "m1", Role: agentstate.RoleUser, Parts: []agentstate.Part{agentstate.TextPart("a")}}, {ID: "m2", Role: agentstate.RoleAssistant, Parts: []agentstate.Part{agentstate.TextPart("b")}}}
	want := []agentstate.Entry{{Message: log[0], SourceID: "m1", LogPos: 1}, {Message: log[1], SourceID: "m2", LogPos: 2}}
	if diff := cmp.Diff(want, agentstate.EntriesFromLog(log)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := agentstate.EntriesFromLog(nil); len(got) != 0 {
		t.Errorf("EntriesFromLog(nil) = %v", got)
	}
}

func TestStateHelpers(t *testing.T) {
	running := []struct {
		e    agentstate.Execution
		want bool
	}{
		{agentstate.Execution{ID: "e", Status: agentstate.ExecutionRunning}, true},
		{agentstate.Execution{ID: "e"}, true},
		{agentstate.Execution{ID: "e", Status: agentstate.ExecutionCompleted}, false},
		{agentstate.Execution{ID: "e", Status: agentstate.ExecutionFailed}, false},
		{agentstate.Execution{Status: agentstate.ExecutionRunning}, false},
	}
	for _, tt := range running {
		if got := tt.e.Running(); got != tt.want {
			t.Errorf("%+v.Running() = %v, want %v", tt.e, got, tt.want)
		}
	}
	if got := (agentstate.Usage{InputTokens: 100, CachedInputTokens: 20, OutputTokens: 3}).Total(); got != 123 {
		t.Errorf("Usage.Total = %d, want 123", got)
	}
	if diff := cmp.Diff(agentstate.Part{Kind: agentstate.PartText, Text: "hi"}, agentstate.TextPart("hi")); diff != "" {
		t.Errorf("TextPart (-want +got):\n%s", diff)
	}
}

func TestNames(t *testing.T) {
	got := []string{
		agentstate.RoleUnspecified.String(), agentstate.RoleSystem.String(), agentstate.RoleTool.String(), agentstate.Role(9).String(),
		agentstate.KindRegular.String(), agentstate.KindPlaceholder.String(), agentstate.MessageKind(7).String(),
		agentstate.PartUnspecified.String(), agentstate.PartReasoning.String(), agentstate.PartKind(8).String(),
		agentstate.ProvenanceExact.String(), agentstate.Provenance(9).String(), agentstate.RenderAnthropic.String(), agentstate.RenderFormat(9).String(),
	}
	want := []string{
		"unspecified", "system", "tool", "role(9)",
		"regular", "placeholder", "kind(7)",
		"unspecified", "reasoning", "part(8)",
		"exact", "provenance?", "anthropic", "render?",
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
		{&agentstate.InvalidArgumentError{Reason: agentstate.ReasonInvalidState, Violations: []agentstate.FieldViolation{
			{Field: "state.model.name", Description: "required"}, {Field: "options.view", Description: "unknown view 9"}}},
			"invalid_state: state.model.name: required; options.view: unknown view 9"},
		{&agentstate.UnknownProfileError{Name: "fast", Known: []string{"budget-aware", "pragmatic"}}, `unknown profile "fast" (known: budget-aware, pragmatic)`},
		{&agentstate.UnknownModelError{Field: "model", Model: "gpt-9"},
			`unknown model "gpt-9": set state.model.context_window_token_count, use a registered model name, or add the model to the config file's model_registry (name, provider, encoding, estimator, context_window; see examples/profiles.yaml)`},
		{&agentstate.IrreducibleError{NeededTokens: 9000, AvailableTokens: 8000, Detail: "pinned messages"}, "context irreducible: needs 9000 tokens, 8000 available: pinned messages"},
		{&agentstate.LimitError{Field: "state.context.messages", Limit: 10, Got: 11}, "state.context.messages: 11 exceeds the limit of 10"},
		{&agentstate.PreconditionError{Reason: agentstate.ReasonProviderMismatch, Field: "model.provider", Detail: "locked to openai"}, "model.provider: locked to openai"},
		{&agentstate.UnavailableError{Backend: "summarizer", Detail: "connection refused"}, "summarizer unavailable: connection refused"},
		{fmt.Errorf("stage compact: %w", agentstate.ErrInvariant), "stage compact: invariant violated"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%T.Error() = %q, want %q", tt.err, got, tt.want)
		}
	}
	if !errors.Is(fmt.Errorf("stage compact: %w", agentstate.ErrInvariant), agentstate.ErrInvariant) {
		t.Error("a wrapped ErrInvariant is not found by errors.Is")
	}
}
