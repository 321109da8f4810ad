package routing

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

func TestCheckLifecycle(t *testing.T) {
	window := uint32(200_000)
	state := func(version uint32, provider string) *agentstate.State {
		st := runningState()
		st.SchemaVersion = version
		st.Model = agentstate.ModelSpec{Name: "model-a", Provider: provider}
		st.Context.Tools = []agentstate.ToolDefinition{{Name: "grep"}}
		st.Context.Metadata = map[string]string{"tenant": "t1"}
		return st
	}
	// kept is st as CheckLifecycle returns it when it passes.
	kept := func(st *agentstate.State, model agentstate.ModelSpec) *agentstate.State {
		st.SchemaVersion = agentstate.CurrentSchemaVersion
		st.Model = model
		return st
	}
	// discarded is st with its history gone.
	discarded := func(st *agentstate.State, model agentstate.ModelSpec) *agentstate.State {
		return &agentstate.State{SchemaVersion: agentstate.CurrentSchemaVersion, AgentID: st.AgentID, Model: model, Context: agentstate.Context{
			SystemPrompt: st.Context.SystemPrompt, Tools: st.Context.Tools, Metadata: st.Context.Metadata,
		}}
	}
	// named is st with its model renamed.
	named := func(st *agentstate.State, model string) *agentstate.State {
		st.Model.Name = model
		return st
	}
	providerOf := func(model string) string {
		return map[string]string{"gpt-4o": "openai", "gpt-4.1": "openai", "claude-sonnet-4-5": "anthropic"}[model]
	}
	tests := []struct {
		name          string
		state         *agentstate.State
		requested     agentstate.ModelSpec
		reset         bool
		want          *agentstate.State
		wantDiscarded bool
		wantErr       error
	}{
		{
			name:  "version 0 is read as 1",
			state: state(0, "openai"),
			want:  kept(state(0, "openai"), agentstate.ModelSpec{Name: "model-a", Provider: "openai"}),
		},
		{
			name:      "same provider in another case, the requested model replaces the state's",
			state:     state(1, "openai"),
			requested: agentstate.ModelSpec{Name: "model-b", Provider: "OpenAI", ContextWindowTokens: &window},
			want:      kept(state(1, "openai"), agentstate.ModelSpec{Name: "model-b", Provider: "OpenAI", ContextWindowTokens: &window}),
		},
		{
			name:      "a requested model without provider keeps the state's lock",
			state:     state(1, "anthropic"),
			requested: agentstate.ModelSpec{Name: "model-b"},
			want:      kept(state(1, "anthropic"), agentstate.ModelSpec{Name: "model-b", Provider: "anthropic"}),
		},
		{
			name:      "a state without provider is not locked",
			state:     state(1, ""),
			requested: agentstate.ModelSpec{Name: "model-b", Provider: "google"},
			want:      kept(state(1, ""), agentstate.ModelSpec{Name: "model-b", Provider: "google"}),
		},
		{
			name:      "reset on a matching state discards nothing",
			state:     state(1, "openai"),
			requested: agentstate.ModelSpec{Provider: "openai"},
			reset:     true,
			want:      kept(state(1, "openai"), agentstate.ModelSpec{Provider: "openai"}),
		},
		{
			name:      "another provider is a precondition failure",
			state:     state(1, "openai"),
			requested: agentstate.ModelSpec{Name: "claude-sonnet-4-5", Provider: "anthropic"},
			wantErr: &agentstate.PreconditionError{Reason: agentstate.ReasonProviderMismatch, Field: "model.provider",
				Detail: `the state is locked to provider "openai", the request is for "anthropic"; set reset to discard the history and start over`},
		},
		{
			name:          "another provider with reset discards the history",
			state:         state(1, "openai"),
			requested:     agentstate.ModelSpec{Name: "claude-sonnet-4-5", Provider: "anthropic"},
			reset:         true,
			want:          discarded(state(1, "openai"), agentstate.ModelSpec{Name: "claude-sonnet-4-5", Provider: "anthropic"}),
			wantDiscarded: true,
		},
		{
			name:  "an unsupported version is a precondition failure",
			state: state(2, "openai"),
			wantErr: &agentstate.PreconditionError{Reason: agentstate.ReasonStateVersionUnsupported, Field: "state.schema_version",
				Detail: "state schema version 2 is not supported: this server reads version 1; set reset to discard the history and start over"},
		},
		{
			name:          "an unsupported version with reset keeps the state's model when none is requested",
			state:         state(7, "openai"),
			reset:         true,
			want:          discarded(state(7, "openai"), agentstate.ModelSpec{Name: "model-a", Provider: "openai"}),
			wantDiscarded: true,
		},
		{
			name:  "a state without provider is locked to its model's, and says so",
			state: named(state(1, ""), "gpt-4o"),
			want:  kept(named(state(1, ""), "gpt-4o"), agentstate.ModelSpec{Name: "gpt-4o", Provider: "openai"}),
		},
		{
			name:      "a requested model of the same provider keeps the lock",
			state:     named(state(1, ""), "gpt-4o"),
			requested: agentstate.ModelSpec{Name: "gpt-4.1"},
			want:      kept(named(state(1, ""), "gpt-4o"), agentstate.ModelSpec{Name: "gpt-4.1", Provider: "openai"}),
		},
		{
			name:      "a requested model of another provider is a mismatch even without a provider",
			state:     named(state(1, ""), "gpt-4o"),
			requested: agentstate.ModelSpec{Name: "claude-sonnet-4-5"},
			wantErr: &agentstate.PreconditionError{Reason: agentstate.ReasonProviderMismatch, Field: "model.provider",
				Detail: `the state is locked to provider "openai", the request is for "anthropic" (derived from model "claude-sonnet-4-5"; name model.provider when the state's provider serves that model); set reset to discard the history and start over`},
		},
		{
			name:      "a requested model without provider is counted as its own, not the state's",
			state:     state(1, "openai"),
			requested: agentstate.ModelSpec{Name: "claude-sonnet-4-5"},
			reset:     true,
			want:      discarded(state(1, "openai"), agentstate.ModelSpec{Name: "claude-sonnet-4-5", Provider: "anthropic"}),

			wantDiscarded: true,
		},
		{
			name:      "a provider the request names serves another provider's model",
			state:     state(1, "openai"),
			requested: agentstate.ModelSpec{Name: "claude-sonnet-4-5", Provider: "openai"},
			want:      kept(state(1, "openai"), agentstate.ModelSpec{Name: "claude-sonnet-4-5", Provider: "openai"}),
		},
		{
			name: "nil state",
			want: &agentstate.State{SchemaVersion: agentstate.CurrentSchemaVersion},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := deepCopy(tt.state)
			got, gotDiscarded, err := CheckLifecycle(tt.state, tt.requested, tt.reset, providerOf)
			if diff := cmp.Diff(tt.wantErr, err); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
			if gotDiscarded != tt.wantDiscarded {
				t.Errorf("discarded = %v, want %v", gotDiscarded, tt.wantDiscarded)
			}
			if diff := cmp.Diff(before, tt.state); diff != "" {
				t.Errorf("CheckLifecycle modified its input (-before +after):\n%s", diff)
			}
		})
	}
}
