package routing

import (
	"fmt"
	"strings"

	"github.com/contextcompiler/ctxc/policies"
)

// CheckLifecycle checks that this build can use st with the requested model
// and returns the state to work on, with SchemaVersion set to the current
// version and the requested model applied. st is never modified.
//
//   - Schema version: 0 is read as policies.CurrentSchemaVersion; any other
//     version is a *policies.PreconditionError with reason
//     ReasonStateVersionUnsupported (field "state.schema_version").
//   - Provider lock: a state whose model names a provider is locked to it. A
//     requested provider that differs (case-insensitively) is a
//     *policies.PreconditionError with reason ReasonProviderMismatch (field
//     "model.provider"). An empty provider on either side does not lock.
//   - A non-empty requested model replaces st.Model; when it names no provider
//     it keeps the state's, so that omitting it never unlocks the state.
//
// With reset, either failure discards the history instead: the result is a
// state with an empty log and no execution that keeps the agent id, system
// prompt, tools, response format and context metadata, with the requested
// model (or the state's when none is requested), and discarded is true.
// A state that passes both checks is never discarded, reset or not.
func CheckLifecycle(st *policies.State, requested policies.ModelSpec, reset bool) (*policies.State, bool, error) {
	if st == nil {
		st = &policies.State{}
	}
	model := st.Model
	if !emptyModel(requested) {
		model = requested
		if model.Provider == "" {
			model.Provider = st.Model.Provider
		}
	}

	var problem error
	version := st.SchemaVersion
	if version == 0 {
		version = policies.CurrentSchemaVersion
	}
	switch {
	case version != policies.CurrentSchemaVersion:
		problem = &policies.PreconditionError{
			Reason: policies.ReasonStateVersionUnsupported,
			Field:  "state.schema_version",
			Detail: fmt.Sprintf("state schema version %d is not supported: this server reads version %d; set reset to discard the history and start over", st.SchemaVersion, policies.CurrentSchemaVersion),
		}
	case st.Model.Provider != "" && requested.Provider != "" && !strings.EqualFold(st.Model.Provider, requested.Provider):
		problem = &policies.PreconditionError{
			Reason: policies.ReasonProviderMismatch,
			Field:  "model.provider",
			Detail: fmt.Sprintf("the state is locked to provider %q, the request is for %q; set reset to discard the history and start over", st.Model.Provider, requested.Provider),
		}
	}

	if problem == nil {
		next := *st
		next.SchemaVersion = policies.CurrentSchemaVersion
		next.Model = model
		return &next, false, nil
	}
	if !reset {
		return nil, false, problem
	}
	return &policies.State{
		SchemaVersion: policies.CurrentSchemaVersion,
		AgentID:       st.AgentID,
		Model:         model,
		Context: policies.Context{
			SystemPrompt:   st.Context.SystemPrompt,
			Tools:          st.Context.Tools,
			ResponseFormat: st.Context.ResponseFormat,
			Metadata:       st.Context.Metadata,
		},
	}, true, nil
}

func emptyModel(m policies.ModelSpec) bool {
	return m.Name == "" && m.Provider == "" && m.ContextWindowTokens == nil && m.MaxOutputTokens == nil
}
