package agentstate

import (
	"errors"
	"fmt"
	"strings"
)

// Error reasons, reported in google.rpc.ErrorInfo.reason.
const (
	ReasonInvalidState            = "INVALID_STATE"
	ReasonUnknownProfile          = "UNKNOWN_PROFILE"
	ReasonUnknownModel            = "UNKNOWN_MODEL"
	ReasonUnknownEncoding         = "UNKNOWN_ENCODING"
	ReasonContextIrreducible      = "CONTEXT_IRREDUCIBLE"
	ReasonStateVersionUnsupported = "STATE_VERSION_UNSUPPORTED"
	ReasonProviderMismatch        = "PROVIDER_MISMATCH"
	ReasonLimitExceeded           = "LIMIT_EXCEEDED"
	ReasonInvariantViolated       = "INVARIANT_VIOLATED"
	ReasonBackendUnavailable      = "BACKEND_UNAVAILABLE"
)

// FieldViolation names one bad field by its full path
// ("state.context.messages[3].parts[0].tool_result.tool_call_id").
type FieldViolation struct {
	Field       string
	Description string
}

// InvalidArgumentError is bad input; the server answers INVALID_ARGUMENT with a
// BadRequest listing the violations.
type InvalidArgumentError struct {
	Reason     string
	Violations []FieldViolation
	Metadata   map[string]string
}

func (e *InvalidArgumentError) Error() string {
	parts := make([]string, 0, len(e.Violations))
	for _, v := range e.Violations {
		parts = append(parts, v.Field+": "+v.Description)
	}
	return strings.ToLower(e.Reason) + ": " + strings.Join(parts, "; ")
}

// UnknownProfileError is a request for a profile the server does not have.
type UnknownProfileError struct {
	Name  string
	Known []string
}

func (e *UnknownProfileError) Error() string {
	return fmt.Sprintf("unknown profile %q (known: %s)", e.Name, strings.Join(e.Known, ", "))
}

// UnknownModelError is a model the registry does not know, with no window given.
type UnknownModelError struct {
	Field string
	Model string
}

func (e *UnknownModelError) Error() string {
	return fmt.Sprintf("unknown model %q: set state.model.context_window_token_count, use a registered model name, or add the model to the config file's model_registry (name, provider, encoding, estimator, context_window; see examples/profiles.yaml)", e.Model)
}

// IrreducibleError is a context whose system prompt, pinned messages and minimum
// tail cannot fit the window; the server answers RESOURCE_EXHAUSTED.
type IrreducibleError struct {
	NeededTokens    int
	AvailableTokens int
	Detail          string
}

func (e *IrreducibleError) Error() string {
	return fmt.Sprintf("context irreducible: needs %d tokens, %d available: %s", e.NeededTokens, e.AvailableTokens, e.Detail)
}

// LimitError is a request over a documented size or count limit; the server
// answers RESOURCE_EXHAUSTED.
type LimitError struct {
	Field string
	Limit int
	Got   int
	// AtLeast says counting stopped at Got, the first past Limit, and
	// read no further: the request holds at least Got.
	AtLeast bool
}

func (e *LimitError) Error() string {
	if e.AtLeast {
		return fmt.Sprintf("%s: more than the limit of %d (counting stopped at %d; the rest was not read)", e.Field, e.Limit, e.Got)
	}
	return fmt.Sprintf("%s: %d exceeds the limit of %d", e.Field, e.Got, e.Limit)
}

// PreconditionError is a state this server cannot use as it is (unsupported
// version, provider mismatch); the server answers FAILED_PRECONDITION.
type PreconditionError struct {
	Reason string
	Field  string
	Detail string
}

func (e *PreconditionError) Error() string { return e.Field + ": " + e.Detail }

// UnavailableError is a required external backend (an LLM endpoint) that is
// down when the profile allows no fallback; the server answers UNAVAILABLE.
type UnavailableError struct {
	Backend string
	Detail  string
}

func (e *UnavailableError) Error() string { return e.Backend + " unavailable: " + e.Detail }

// ErrInvariant marks a violated invariant: a bug in a policy, never output.
var ErrInvariant = errors.New("invariant violated")
