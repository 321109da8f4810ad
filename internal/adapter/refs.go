package adapter

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/adapter/stateref"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// ReasonStateRefNotFound is the ErrorInfo reason of a base_state_ref this
// server cannot resolve: the client sends the whole state instead.
const ReasonStateRefNotFound = "STATE_REF_NOT_FOUND"

// refFormat is what a state_ref looks like; anything else is refused before
// any lookup.
var refFormat = regexp.MustCompile(`^sr1-[0-9a-f]{32}$`)

// refCall is a call by reference resolved: what its response's state_ref and
// the store need.
type refCall struct {
	baseRef string
	base    stateref.Resolved
	overlay []byte
	ref     string
	// from is where the appended messages start in the resolved log.
	from int
}

// refParts is how a request names its state by reference.
type refParts struct {
	ref      string
	state    *ctxcv1.AgentState
	appended []*ctxcv1.Message
	// blob and input say the request also carries a state_blob or an
	// input_json, which a call by reference cannot.
	blob, input bool
}

// byRef returns the state a request carries: its state as it is, or, when
// it names a base_state_ref, the referenced state extended with the
// appended messages and the fields its state sets. What the resolved state
// holds beyond the request's bytes is held in flight first.
func (d *decoder) byRef(ctx context.Context, p refParts) (*ctxcv1.AgentState, error) {
	if p.ref == "" {
		if len(p.appended) > 0 {
			d.violate("appended_messages", "only with base_state_ref: the messages appended to the referenced state")
			return nil, d.err()
		}
		return p.state, nil
	}
	switch {
	case !refFormat.MatchString(p.ref):
		d.violate("base_state_ref", "not a state_ref this server gives (sr1- and 32 hex digits)")
	case p.blob:
		d.violate("state_blob", "give either base_state_ref or state_blob, not both")
	case p.input:
		d.violate("input_json", "not with base_state_ref: input_json replaces the log")
	case len(p.state.GetContext().GetMessages()) > 0:
		d.violate("state.context.messages", "must be empty with base_state_ref: send the messages appended since in appended_messages")
	}
	if err := d.err(); err != nil {
		return nil, err
	}
	caller, _ := CallerFromContext(ctx)
	base, ok, err := d.refs.Get(ctx, caller, p.ref)
	if !ok {
		detail := "not known to this server (expired, evicted, never given, or given to another caller): send the whole state"
		if err != nil {
			detail = "could not be read from the shared store: send the whole state"
			d.log.WarnContext(ctx, "state ref lookup failed", "error", err, "component", "state_refs")
		}
		return nil, &agentstate.PreconditionError{Reason: ReasonStateRefNotFound, Field: "base_state_ref", Detail: detail}
	}
	if d.reserve != nil {
		// The resolved log is decoded like one sent whole.
		if err := d.reserve("base_state_ref", base.Size); err != nil {
			return nil, err
		}
	}
	overlay := stateref.Overlay{State: p.state, Appended: p.appended}
	enc := overlay.Encode()
	d.call = &refCall{baseRef: p.ref, base: base, overlay: enc, ref: stateref.AppendedRef(p.ref, enc), from: len(base.State.GetContext().GetMessages())}
	return stateref.Extend(base.State, overlay), nil
}

// appendedPath matches a field path inside a resolved log's messages.
var appendedPath = regexp.MustCompile(`^state\.context\.messages\[(\d+)\]`)

// namedForCaller names the fields of err as the caller sent them: a message
// of a call by reference that was appended is appended_messages[i], not
// state.context.messages[n+i] of a log the caller did not send.
func (d *decoder) namedForCaller(err error) error {
	if d.call == nil || err == nil {
		return err
	}
	rename := func(field string) string {
		m := appendedPath.FindStringSubmatch(field)
		if m == nil {
			return field
		}
		i, _ := strconv.Atoi(m[1])
		if i < d.call.from {
			return field
		}
		return "appended_messages[" + strconv.Itoa(i-d.call.from) + "]" + strings.TrimPrefix(field, m[0])
	}
	var invalid *agentstate.InvalidArgumentError
	var limit *agentstate.LimitError
	switch {
	case errors.As(err, &invalid):
		for i := range invalid.Violations {
			invalid.Violations[i].Field = rename(invalid.Violations[i].Field)
		}
	case errors.As(err, &limit):
		limit.Field = rename(limit.Field)
	}
	return err
}

// keepGiven keeps the state the call was given (whole, from its blob, or
// resolved from a reference) and returns its reference; "" when the server
// keeps none.
func (s *Service) keepGiven(ctx context.Context, d *decoder) string {
	if !s.refs.Enabled() || d.given == nil || !namesStates(ctx) {
		return ""
	}
	caller, _ := CallerFromContext(ctx)
	if c := d.call; c != nil {
		s.refs.PutAppended(ctx, caller, c.ref, c.base, c.baseRef, c.overlay, d.given)
		s.rememberDecoded(caller, c.ref, d)
		return c.ref
	}
	ref, size := d.givenRef, d.givenSize
	if ref == "" { // not hashed while it was decoded: encode it to name it
		var ok bool
		if ref, size, ok = encodedRef(d.given); !ok {
			return ""
		}
	}
	s.refs.PutWhole(ctx, caller, ref, d.given, stateref.Charge(d.given, size))
	s.rememberDecoded(caller, ref, d)
	return ref
}

// rememberDecoded keeps the given state's log as the call decoded it
// beside the state, when it decoded that very log (not a history it
// discarded): the same slice, so no message needs comparing.
func (s *Service) rememberDecoded(caller, ref string, d *decoder) {
	l, given := d.decoded, d.given.GetContext().GetMessages()
	if l != nil && len(given) > 0 && len(l.from) == len(given) && &l.from[0] == &given[0] {
		s.refs.Remember(caller, ref, l, l.bytes)
	}
}

// encodedRef is the reference of st by its deterministic encoding, with the
// encoding's size.
func encodedRef(st *ctxcv1.AgentState) (string, int64, bool) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(st)
	if err != nil {
		return "", 0, false
	}
	return stateref.WholeRef(nil, b), int64(len(b)), true
}

// keepReturned keeps a state a call returns (Route's, Compact's) and
// returns its reference; "" when the server keeps none.
func (s *Service) keepReturned(ctx context.Context, st *ctxcv1.AgentState) string {
	if !s.refs.Enabled() || st == nil || !namesStates(ctx) {
		return ""
	}
	ref, size, ok := encodedRef(st)
	if !ok {
		return ""
	}
	caller, _ := CallerFromContext(ctx)
	s.refs.PutWhole(ctx, caller, ref, st, stateref.Charge(st, size))
	return ref
}
