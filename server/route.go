package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/contextcompiler/ctxc/compiler/routing"
	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/pipeline"
	"github.com/contextcompiler/ctxc/server/stateblob"
)

// routeInput converts the oneof input of a RouteRequest. Messages may come
// without ids: Route gives them stable ones.
func routeInput(d *decoder, req *ctxcv1.RouteRequest) (routing.Input, error) {
	var in routing.Input
	switch x := req.GetInput().(type) {
	case *ctxcv1.RouteRequest_UserTurn:
		in = routing.UserTurn{
			Messages:    d.messages("user_turn.messages", x.UserTurn.GetMessages()),
			ExecutionID: x.UserTurn.GetExecutionId(),
		}
	case *ctxcv1.RouteRequest_Step:
		step := routing.Step{
			Messages:     d.messages("step.messages", x.Step.GetMessages()),
			FinishReason: routing.FinishReason(x.Step.GetFinishReason()),
			Error:        x.Step.GetError(),
		}
		if f := x.Step.GetFinishReason(); f < 0 || f > ctxcv1.FinishReason_FINISH_REASON_ERROR {
			d.violate("step.finish_reason", fmt.Sprintf("unknown finish reason %d", f))
		}
		if u := x.Step.GetUsage(); u != nil {
			step.Usage = &policies.Usage{InputTokens: u.GetInputTokenCount(), CachedInputTokens: u.GetCachedInputTokenCount(), OutputTokens: u.GetOutputTokenCount()}
		}
		in = step
	case *ctxcv1.RouteRequest_Event:
		if x.Event.GetText() == "" {
			d.violate("event.text", "required")
		}
		if r := x.Event.GetRole(); r < 0 || r > ctxcv1.Role_ROLE_TOOL {
			d.violate("event.role", fmt.Sprintf("unknown role %d", r))
		}
		in = routing.Event{Text: x.Event.GetText(), Role: policies.Role(x.Event.GetRole()), Metadata: x.Event.GetMetadata()}
	default:
		d.violate("input", "required: one of user_turn, step or event")
	}
	if err := d.err(); err != nil {
		var invalid *policies.InvalidArgumentError
		if errors.As(err, &invalid) {
			invalid.Reason = routing.ReasonInvalidRouteInput
		}
		return nil, err
	}
	return in, nil
}

// compactAtBoundary runs the profile's compaction on a state whose execution
// just ended. Appending is what the caller asked for, so a compaction that
// cannot fit the window does not fail the call: the report says why.
func (s *Service) compactAtBoundary(ctx context.Context, profile string, st *policies.State) (*policies.State, *ctxcv1.CompileReport) {
	res, err := s.compiler.Compact(ctx, pipeline.Request{Profile: profile, State: st})
	if err != nil {
		var irreducible *policies.IrreducibleError
		if !errors.As(err, &irreducible) {
			s.log.ErrorContext(ctx, "compaction at execution end failed", "profile", profile, "error", err.Error())
			return st, &ctxcv1.CompileReport{Profile: profile, Warnings: []string{"compaction at the end of the execution failed; the state is returned uncompacted"}}
		}
		return st, &ctxcv1.CompileReport{Profile: profile, Warnings: []string{"compaction at the end of the execution did not fit the window: " + irreducible.Error()}}
	}
	return res.State, reportToProto(&res.Report)
}

// putState sets the response's state in the form the request used.
func (s *Service) putState(resp *ctxcv1.RouteResponse, st *policies.State, asBlob bool) error {
	out := stateToProto(st)
	if !asBlob {
		resp.State = out
		return nil
	}
	blob, err := stateblob.Encode(out)
	if err != nil {
		return &policies.LimitError{Field: "state_blob", Limit: stateblob.MaxPayloadBytes, Got: -1}
	}
	resp.StateBlob = blob
	return nil
}
