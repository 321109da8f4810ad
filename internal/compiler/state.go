package compiler

import (
	"github.com/contextcompiler/ctxc/internal/compiler/routing"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// StateSource is a request's state as the adapter decoded it, with what the
// call says about it.
type StateSource struct {
	// State is the decoded state, from the request's message or its blob.
	State *agentstate.State
	// FromBlob says the state came as the opaque blob of an earlier response.
	FromBlob bool
	// Model is the call's model; zero when the call names none. It replaces
	// the state's model, keeping the state's provider when it names none.
	Model agentstate.ModelSpec
	// Reset permits discarding a history this server cannot use (another
	// schema version, another provider, a state_blob it cannot read) instead
	// of failing.
	Reset bool
	// Discarded says the adapter already discarded, with Reset, a state_blob
	// it could not read (corrupt, truncated, foreign or of another format
	// version): State is then a fresh state with the call's model, and
	// DiscardReason says why.
	Discarded     bool
	DiscardReason string
}

// DiscardsHistory reports whether loading discards, unread, the history of a
// state of this schema version: with reset, a state of another version keeps
// only its agent id, model and context settings. The adapter then neither
// decodes nor validates that history, whose layout this build may not know.
func DiscardsHistory(schemaVersion uint32, reset bool) bool {
	return reset && schemaVersion != 0 && schemaVersion != agentstate.CurrentSchemaVersion
}

// loaded is a state ready for a use case and how it was obtained.
type loaded struct {
	state     *agentstate.State
	discarded bool
}

// load applies the lifecycle checks (schema version, provider lock with the
// providers the model registry derives; see routing.CheckLifecycle) and the
// call's model to a decoded state. With reset, a state that fails them is
// replaced by an empty history.
func (s *Service) load(src StateSource) (loaded, error) {
	st, discarded, err := routing.CheckLifecycle(src.State, src.Model, src.Reset, s.counters.ProviderOf)
	if err != nil {
		return loaded{}, err
	}
	return loaded{state: st, discarded: discarded || src.Discarded}, nil
}
