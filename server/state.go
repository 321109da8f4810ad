package server

import (
	"errors"
	"fmt"

	"github.com/contextcompiler/ctxc/compiler/routing"
	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/server/stateblob"
)

// stateSource is how a request carries its state: as a message or as the
// opaque blob of an earlier response, optionally with a per-call model and the
// permission to discard a history this server cannot use.
type stateSource struct {
	state *ctxcv1.AgentState
	blob  []byte
	model *ctxcv1.ModelSpec
	reset bool
}

// loadedState is a validated domain state and how it was obtained.
type loadedState struct {
	state     *policies.State
	discarded bool
	fromBlob  bool
}

// loadState decodes, validates and lifecycle-checks a request's state (field
// violations are left in d for the caller to report with its own): the
// schema version and the provider lock (routing.CheckLifecycle). With reset, a
// state of another version or provider is replaced by an empty history instead
// of failing.
func loadState(d *decoder, src stateSource) (loadedState, error) {
	in := src.state
	fromBlob := len(src.blob) > 0
	switch {
	case in != nil && fromBlob:
		d.violate("state_blob", "give either state or state_blob, not both")
		return loadedState{}, d.err()
	case fromBlob:
		decoded, err := stateblob.Decode(src.blob)
		if err != nil {
			return loadedState{}, blobError(err)
		}
		in = decoded
	}
	if v := in.GetSchemaVersion(); v != 0 && v != policies.CurrentSchemaVersion && src.reset {
		// The history of a foreign version is not read at all: it is discarded.
		in = &ctxcv1.AgentState{SchemaVersion: v, AgentId: in.GetAgentId(), Model: in.GetModel(), Context: &ctxcv1.AgentContext{
			SystemPrompt: in.GetContext().GetSystemPrompt(), Tools: in.GetContext().GetTools(),
			ResponseFormat: in.GetContext().GetResponseFormat(), Metadata: in.GetContext().GetMetadata(),
		}}
	}
	var requested policies.ModelSpec
	if src.model != nil {
		requested = d.model("model", src.model)
		// The state's own model need not be complete when the call names one;
		// its provider still locks the state.
		if in != nil && in.GetModel().GetName() == "" {
			in = &ctxcv1.AgentState{SchemaVersion: in.GetSchemaVersion(), AgentId: in.GetAgentId(), Context: in.GetContext(), Execution: in.GetExecution(),
				Model: &ctxcv1.ModelSpec{Name: src.model.GetName(), Provider: in.GetModel().GetProvider()}}
		}
	}
	st, err := d.state("state", in)
	if err != nil {
		return loadedState{}, err
	}
	if len(d.violations) > 0 {
		// The caller reports these with any others it finds in the request.
		return loadedState{}, nil
	}
	st, discarded, err := routing.CheckLifecycle(st, requested, src.reset)
	if err != nil {
		return loadedState{}, err
	}
	return loadedState{state: st, discarded: discarded, fromBlob: fromBlob}, nil
}

// blobError turns a blob decoding failure into the domain's error: a blob of a
// format this build does not read is a precondition, anything else bad input.
func blobError(err error) error {
	var de *stateblob.DecodeError
	if !errors.As(err, &de) {
		return fmt.Errorf("decode state_blob: %w", err)
	}
	if de.Reason == stateblob.ReasonVersionUnsupported {
		return &policies.PreconditionError{Reason: de.Reason, Field: "state_blob", Detail: de.Description}
	}
	return &policies.InvalidArgumentError{Reason: de.Reason, Violations: []policies.FieldViolation{{Field: "state_blob", Description: de.Description}}}
}
