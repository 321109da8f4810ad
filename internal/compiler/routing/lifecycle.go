package routing

import (
	"fmt"
	"strings"

	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// CheckLifecycle checks that this build can use st with the requested model
// and returns the state to work on, with SchemaVersion set to the current
// version and the requested model applied. st is never modified.
//
//   - Schema version: 0 is read as agentstate.CurrentSchemaVersion; any other
//     version is a *agentstate.PreconditionError with reason
//     ReasonStateVersionUnsupported (field "state.schema_version").
//   - Provider lock: a state is locked to its model's provider: the one its
//     model names, else the one providerOf derives from its model name (the
//     model registry). A requested model's provider is the one it names, else
//     the one providerOf derives from its name, else the state's, so that
//     omitting it never unlocks the state. Two known providers that differ
//     (case-insensitively) are a *agentstate.PreconditionError with reason
//     ReasonProviderMismatch (field "model.provider"); a provider neither
//     named nor derivable does not lock. The state returned names the
//     provider it is locked to, so a state stays locked once it is.
//   - A non-empty requested model replaces st.Model.
//
// With reset, either failure discards the history instead: the result is a
// state with an empty log and no execution that keeps the agent id, system
// prompt, tools, response format and context metadata, with the requested
// model (or the state's when none is requested), and discarded is true.
// A state that passes both checks is never discarded, reset or not.
// providerOf may be nil: then only named providers lock.
func CheckLifecycle(st *agentstate.State, requested agentstate.ModelSpec, reset bool, providerOf func(model string) string) (*agentstate.State, bool, error) {
	if st == nil {
		st = &agentstate.State{}
	}
	derive := func(m agentstate.ModelSpec) string {
		if m.Provider != "" || providerOf == nil || m.Name == "" {
			return m.Provider
		}
		return providerOf(m.Name)
	}
	locked := derive(st.Model)
	model := st.Model
	model.Provider = locked
	if !emptyModel(requested) {
		model = requested
		if model.Provider = derive(requested); model.Provider == "" {
			model.Provider = locked
		}
	}

	var problem error
	version := st.SchemaVersion
	if version == 0 {
		version = agentstate.CurrentSchemaVersion
	}
	switch {
	case version != agentstate.CurrentSchemaVersion:
		problem = &agentstate.PreconditionError{
			Reason: agentstate.ReasonStateVersionUnsupported,
			Field:  "state.schema_version",
			Detail: fmt.Sprintf("state schema version %d is not supported: this server reads version %d; set reset to discard the history and start over", st.SchemaVersion, agentstate.CurrentSchemaVersion),
		}
	case locked != "" && !strings.EqualFold(locked, model.Provider):
		problem = &agentstate.PreconditionError{
			Reason: agentstate.ReasonProviderMismatch,
			Field:  "model.provider",
			Detail: fmt.Sprintf("the state is locked to provider %q, the request is for %q%s; set reset to discard the history and start over",
				locked, model.Provider, derivedFrom(requested)),
		}
	}

	if problem == nil {
		next := *st
		next.SchemaVersion = agentstate.CurrentSchemaVersion
		next.Model = model
		return &next, false, nil
	}
	if !reset {
		return nil, false, problem
	}
	return &agentstate.State{
		SchemaVersion: agentstate.CurrentSchemaVersion,
		AgentID:       st.AgentID,
		Model:         model,
		Context: agentstate.Context{
			SystemPrompt:   st.Context.SystemPrompt,
			Tools:          st.Context.Tools,
			ResponseFormat: st.Context.ResponseFormat,
			Metadata:       st.Context.Metadata,
		},
	}, true, nil
}

func emptyModel(m agentstate.ModelSpec) bool {
	return m.Name == "" && m.Provider == "" && m.ContextWindowTokens == nil && m.MaxOutputTokens == nil
}

// derivedFrom says where a requested provider came from when the request did
// not name it.
func derivedFrom(requested agentstate.ModelSpec) string {
	if requested.Provider != "" || requested.Name == "" {
		return ""
	}
	return fmt.Sprintf(" (derived from model %q; name model.provider when the state's provider serves that model)", requested.Name)
}
