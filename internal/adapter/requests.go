package adapter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/adapter/stateblob"
	"github.com/contextcompiler/ctxc/internal/adapter/stateref"
	"github.com/contextcompiler/ctxc/internal/compiler"
	"github.com/contextcompiler/ctxc/internal/tokens"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// This file decodes whole requests into the application layer's requests.
// Field violations are collected across the request and returned together;
// limit and blob problems stop the decoding at once.

// WorkingBytesPerMessage is what compiling a state holds in
// max_inflight_bytes per message of its log beyond the request's bytes,
// measured on logs of 100,000 small messages (make abuse).
const WorkingBytesPerMessage = compiler.WorkingBytesPerMessage

// compileRequest decodes a Compile: the state, options, provider input,
// template variables and attachments.
func (d *decoder) compileRequest(ctx context.Context, req *ctxcv1.CompileRequest) (compiler.CompileRequest, error) {
	d.modelFromInput = req.GetOptions().GetRenderIntoInput() && req.GetInputJson() != ""
	state, err := d.byRef(ctx, refParts{ref: req.GetBaseStateRef(), state: req.GetState(), appended: req.GetAppendedMessages(),
		blob: len(req.GetStateBlob()) > 0, input: req.GetInputJson() != ""})
	if err != nil {
		return compiler.CompileRequest{}, err
	}
	src, err := d.source(state, req.GetStateBlob(), req.GetModel(), req.GetResetHistory())
	if err != nil {
		return compiler.CompileRequest{}, d.namedForCaller(err)
	}
	opts := d.options("options", req.GetOptions())
	opts.Goal = d.goal("goal", req.GetGoal())
	out := compiler.CompileRequest{
		Request:                 compiler.Request{Source: src, Profile: req.GetProfile(), Options: opts, Scope: callerScope(ctx)},
		Attachments:             d.attachments("attachments", req.GetAttachments()),
		Input:                   d.providerInput(req.GetInputFormat(), req.GetInputJson()),
		TemplateVariables:       req.GetOptions().GetTemplateVariables(),
		OmitStablePrefix:        req.GetOmitStablePrefix(),
		OmitStablePrefixReports: req.GetOmitStablePrefixReports(),
		RenderIntoInput:         req.GetOptions().GetRenderIntoInput(),
	}
	if len(out.TemplateVariables) > 0 {
		out.RequestBytes = proto.Size(req) // only templates need it, and a long log costs a walk
		out.Reserve = d.reserveTemplate    // what the template expands to is held before it is made
	}
	if out.Input != nil {
		out.ReserveInput = d.reserveInput // what the body decodes to is held before it is decoded
	}
	return out, d.namedForCaller(d.err())
}

// reserveTemplate holds what a system prompt template expands to, refusing
// an expansion that could never be held.
func (d *decoder) reserveTemplate(n int64) error {
	if d.inflightLimit > 0 && n > d.inflightLimit {
		return &agentstate.LimitError{Field: "options.template_variables (the memory the expanded system prompt needs, in bytes)",
			Limit: int(d.inflightLimit), Got: int(n)}
	}
	if d.reserve == nil {
		return nil
	}
	return d.reserve("options.template_variables", n)
}

// reserveInput holds what importing and compiling input_json holds beyond
// the request's bytes, as a state holds its messages' working memory:
// refused as a state that large is (LIMIT_EXCEEDED naming the field) when
// it could never be held, waiting for room (then OVERLOADED) when it could.
func (d *decoder) reserveInput(field string, n int64) error {
	if d.grow == nil {
		return nil
	}
	return d.grow(field, n)
}

// heldFor names field as what needs the memory of a need that
// MaxInflightBytes could never hold.
func heldFor(field string, err error) error {
	var never *NeverFitsError
	if errors.As(err, &never) {
		return &agentstate.LimitError{Field: field + " (the bytes in flight the call needs with it; max_inflight_bytes)", Limit: int(never.Limit), Got: int(never.Need)}
	}
	return err
}

// request decodes what Budget and Compact take: a state (whole or by
// reference; no blob, no model, no reset), a profile and options.
func (d *decoder) request(ctx context.Context, p refParts, profile string, opts *ctxcv1.CompileOptions) (compiler.Request, error) {
	state, err := d.byRef(ctx, p)
	if err != nil {
		return compiler.Request{}, err
	}
	src, err := d.source(state, nil, nil, false)
	if err != nil {
		return compiler.Request{}, d.namedForCaller(err)
	}
	out := compiler.Request{Source: src, Profile: profile, Options: d.options("options", opts), Scope: callerScope(ctx)}
	return out, d.namedForCaller(d.err())
}

// source decodes how a request carries its state: as a message or as the
// opaque blob of an earlier response, optionally with the call's model and
// the permission to discard a history this server cannot use. The
// application layer loads it (compiler.StateSource); two of its rules decide
// what is decoded here: a history it discards unread is not decoded, and the
// state's model name is not required when the call names a model.
func (d *decoder) source(state *ctxcv1.AgentState, blob []byte, model *ctxcv1.ModelSpec, reset bool) (compiler.StateSource, error) {
	in := state
	src := compiler.StateSource{FromBlob: len(blob) > 0, Reset: reset}
	d.given = state
	switch {
	case in != nil && src.FromBlob:
		d.violate("state_blob", "give either state or state_blob, not both")
		return compiler.StateSource{}, d.err()
	case src.FromBlob:
		// What the blob decompresses to is held in flight before it is
		// made (and decompression stops at what it declares).
		if d.reserve != nil {
			if err := d.reserve("state_blob", int64(stateblob.DecodedSize(blob))); err != nil {
				return compiler.StateSource{}, err
			}
		}
		decoded, err := stateblob.Decode(blob)
		if err != nil && !reset {
			return compiler.StateSource{}, blobError(err)
		}
		if err != nil {
			d.given = nil
			return d.freshSource(src, model, blobProblem(err))
		}
		in = decoded
		d.given, d.givenRef, d.givenSize = decoded, stateref.WholeRef(nil, blob), int64(stateblob.DecodedSize(blob))
	}
	if d.grow != nil {
		// What the pipeline builds from a state (entries, counts, reports)
		// costs about this much per message beyond the state's own bytes,
		// held before it is built: a log of many small messages is many
		// times its size in memory.
		if err := d.grow("state.context.messages", int64(len(in.GetContext().GetMessages()))*WorkingBytesPerMessage); err != nil {
			return compiler.StateSource{}, err
		}
	}
	if compiler.DiscardsHistory(in.GetSchemaVersion(), reset) {
		in = &ctxcv1.AgentState{SchemaVersion: in.GetSchemaVersion(), AgentId: in.GetAgentId(), Model: in.GetModel(), Context: &ctxcv1.AgentContext{
			SystemPrompt: in.GetContext().GetSystemPrompt(), Tools: in.GetContext().GetTools(),
			ResponseFormat: in.GetContext().GetResponseFormat(), Metadata: in.GetContext().GetMetadata(),
		}}
	}
	if model != nil {
		src.Model = d.model("model", model)
		if in != nil && in.GetModel().GetName() == "" {
			// The call's model replaces the state's; its provider still locks the state.
			in = &ctxcv1.AgentState{SchemaVersion: in.GetSchemaVersion(), AgentId: in.GetAgentId(), Context: in.GetContext(), Execution: in.GetExecution(),
				Model: &ctxcv1.ModelSpec{Name: model.GetName(), Provider: in.GetModel().GetProvider()}}
		}
	}
	// A blob holds what a ctxc response returned, so a state in it that fails
	// validation was damaged: with reset it is discarded like a corrupt blob.
	check := d
	if src.FromBlob && reset {
		check = &decoder{limits: d.limits}
	}
	st, err := check.state("state", in)
	if err != nil {
		return compiler.StateSource{}, err
	}
	if d.grow != nil && d.longestPiece > 0 {
		// Counting a long run of text without a space (one piece) holds
		// memory in proportion to it: held before anything is counted, and
		// refused when it could never be held.
		need := int64(d.longestPiece) * tokens.PieceWorkingBytes
		if d.inflightLimit > 0 && need > d.inflightLimit {
			return compiler.StateSource{}, &agentstate.LimitError{Field: "state (its longest run of text without a space, in bytes: counted as one piece)",
				Limit: int(d.inflightLimit / tokens.PieceWorkingBytes), Got: d.longestPiece}
		}
		if err := d.grow("state (its longest run of text without a space)", need); err != nil {
			return compiler.StateSource{}, err
		}
	}
	if v := check.violations; check != d && len(v) > 0 {
		return d.freshSource(src, model, "its state is invalid: "+v[0].Field+": "+v[0].Description)
	}
	src.State = st
	return src, nil
}

// freshSource starts a fresh state in place of a state_blob that reset_history
// lets the call discard because it cannot be used (a state that state it
// cannot read): the state is empty but for the call's model, which the call
// must then name.
func (d *decoder) freshSource(src compiler.StateSource, model *ctxcv1.ModelSpec, why string) (compiler.StateSource, error) {
	if model == nil {
		d.violate("model", "required: reset_history discarded the state_blob ("+why+"), so the call must name the model")
		return compiler.StateSource{}, d.err()
	}
	if src.Model.Name == "" {
		src.Model = d.model("model", model)
	}
	src.State = &agentstate.State{SchemaVersion: agentstate.CurrentSchemaVersion, Model: src.Model}
	src.Discarded, src.DiscardReason = true, why
	return src, nil
}

// blobProblem says what is wrong with a blob: its reason and description.
func blobProblem(err error) string {
	var de *stateblob.DecodeError
	if errors.As(err, &de) {
		return de.Reason + " (" + de.Description + ")"
	}
	return err.Error()
}

// blobError turns a blob decoding failure into the domain's error: a blob of a
// format this build does not read is a precondition, anything else bad input.
func blobError(err error) error {
	var de *stateblob.DecodeError
	if !errors.As(err, &de) {
		return fmt.Errorf("decode state_blob: %w", err)
	}
	if de.Reason == stateblob.ReasonVersionUnsupported {
		return &agentstate.PreconditionError{Reason: de.Reason, Field: "state_blob", Detail: de.Description}
	}
	return &agentstate.InvalidArgumentError{Reason: de.Reason, Violations: []agentstate.FieldViolation{{Field: "state_blob", Description: de.Description}}}
}

// providerInput decodes a Compile's conversation in a provider's format; nil
// when the request has none.
func (d *decoder) providerInput(format ctxcv1.InputFormat, body string) *compiler.ProviderInput {
	switch {
	case format < 0 || format > ctxcv1.InputFormat_INPUT_FORMAT_OPENAI_RESPONSES:
		d.violate("input_format", fmt.Sprintf("unknown input format %d", format))
	case format == ctxcv1.InputFormat_INPUT_FORMAT_UNSPECIFIED && body != "":
		d.violate("input_format", "required with input_json: which provider's format input_json is in")
	case format != ctxcv1.InputFormat_INPUT_FORMAT_UNSPECIFIED:
		// The enums share their numbers: INPUT_FORMAT_OPENAI is RENDER_FORMAT_OPENAI.
		// The body shares the request's bytes, never written (ProviderInput),
		// rather than being copied before anything is held for it: a body
		// of 30 MB would be held twice per call.
		return &compiler.ProviderInput{Format: agentstate.RenderFormat(format), Body: unsafe.Slice(unsafe.StringData(body), len(body))}
	}
	return nil
}

// goal converts a Compile's goal; nil when the request has none.
func (d *decoder) goal(path string, in *ctxcv1.ContextGoal) *agentstate.Goal {
	if in == nil {
		return nil
	}
	g := &agentstate.Goal{Description: in.GetDescription(), SuccessCriteria: in.GetSuccessCriteria()}
	if strings.TrimSpace(g.Description) == "" {
		d.violate(path+".description", "required when goal is set: what the agent is trying to achieve")
	}
	if n := len(g.Text()); n > compiler.MaxGoalBytes {
		d.violate(path, fmt.Sprintf("%d bytes of description and success criteria, over the limit of %d", n, compiler.MaxGoalBytes))
	}
	return g
}

// attachments converts and checks the documents attached to a Compile.
func (d *decoder) attachments(path string, in []*ctxcv1.Attachment) []agentstate.Attachment {
	if len(in) == 0 {
		return nil
	}
	if len(in) > d.limits.MaxMessages {
		d.violate(path, fmt.Sprintf("at most %d attachments", d.limits.MaxMessages))
		return nil
	}
	out := make([]agentstate.Attachment, len(in))
	for i, a := range in {
		if a.GetAttachmentId() == "" && a.GetContent() == "" {
			d.violate(fmt.Sprintf("%s[%d]", path, i), "either attachment_id or content is required")
		}
		out[i] = agentstate.Attachment{ID: a.GetAttachmentId(), Content: a.GetContent(), Title: a.GetTitle(), Source: a.GetSource(), Type: a.GetAttachmentType()}
	}
	return out
}

// routeRequest decodes a Route: the state first (its violations are
// INVALID_STATE), then the input, whose messages may come without ids (Route
// gives them stable ones) and whose violations are INVALID_ROUTE_INPUT.
func (d *decoder) routeRequest(ctx context.Context, req *ctxcv1.RouteRequest) (compiler.RouteRequest, error) {
	state, err := d.byRef(ctx, refParts{ref: req.GetBaseStateRef(), state: req.GetState(), appended: req.GetAppendedMessages(), blob: len(req.GetStateBlob()) > 0})
	if err != nil {
		return compiler.RouteRequest{}, err
	}
	src, err := d.source(state, req.GetStateBlob(), req.GetModel(), req.GetResetHistory())
	options := d.options("options", req.GetOptions())
	if err == nil {
		err = d.err()
	}
	if err != nil {
		return compiler.RouteRequest{}, d.namedForCaller(err)
	}
	in := &decoder{limits: d.limits, idsOptional: true}
	out := compiler.RouteRequest{Source: src, Profile: req.GetProfile(), Options: options, Input: in.routeInput(req), Scope: callerScope(ctx)}
	if err := in.err(); err != nil {
		var invalid *agentstate.InvalidArgumentError
		if errors.As(err, &invalid) {
			invalid.Reason = compiler.ReasonInvalidRouteInput
		}
		return compiler.RouteRequest{}, err
	}
	return out, nil
}

// routeInput converts the oneof input of a RouteRequest.
func (d *decoder) routeInput(req *ctxcv1.RouteRequest) compiler.RouteInput {
	switch x := req.GetInput().(type) {
	case *ctxcv1.RouteRequest_UserTurn:
		return compiler.UserTurn{
			Messages:    d.messages("user_turn.messages", x.UserTurn.GetMessages()),
			ExecutionID: x.UserTurn.GetExecutionId(),
		}
	case *ctxcv1.RouteRequest_Step:
		step := compiler.Step{
			Messages:     d.messages("step.messages", x.Step.GetMessages()),
			FinishReason: compiler.FinishReason(x.Step.GetFinishReason()),
			Error:        x.Step.GetError(),
		}
		if f := x.Step.GetFinishReason(); f < 0 || f > ctxcv1.FinishReason_FINISH_REASON_ERROR {
			d.violate("step.finish_reason", fmt.Sprintf("unknown finish reason %d", f))
		}
		if u := x.Step.GetUsage(); u != nil {
			step.Usage = &agentstate.Usage{InputTokens: u.GetInputTokenCount(), CachedInputTokens: u.GetCachedInputTokenCount(), OutputTokens: u.GetOutputTokenCount()}
		}
		return step
	case *ctxcv1.RouteRequest_Event:
		if x.Event.GetText() == "" {
			d.violate("event.text", "required")
		}
		if r := x.Event.GetRole(); r < 0 || r > ctxcv1.Role_ROLE_TOOL {
			d.violate("event.role", fmt.Sprintf("unknown role %d", r))
		}
		return compiler.Event{Text: x.Event.GetText(), Role: agentstate.Role(x.Event.GetRole()), Metadata: x.Event.GetMetadata()}
	}
	d.violate("input", "required: one of user_turn, step or event")
	return nil
}

// countRequest decodes a CountTokens. Its size is checked before anything is
// converted.
func (d *decoder) countRequest(req *ctxcv1.CountTokensRequest) (compiler.CountRequest, error) {
	if n := len(req.GetMessages()) + len(req.GetTexts()); n > d.limits.MaxMessages {
		return compiler.CountRequest{}, &agentstate.LimitError{Field: "texts+messages", Limit: d.limits.MaxMessages, Got: n}
	}
	for i, m := range req.GetMessages() {
		if n := len(m.GetParts()); n > d.limits.MaxPartsPerMessage {
			return compiler.CountRequest{}, &agentstate.LimitError{Field: "messages[" + strconv.Itoa(i) + "].parts", Limit: d.limits.MaxPartsPerMessage, Got: n}
		}
	}
	out := compiler.CountRequest{Texts: req.GetTexts(), Messages: d.messages("messages", req.GetMessages())}
	switch c := req.GetCounter().(type) {
	case *ctxcv1.CountTokensRequest_Model:
		out.Model = c.Model
		if c.Model == "" {
			d.violate("model", "must not be empty")
		}
	case *ctxcv1.CountTokensRequest_Encoding:
		out.Encoding = c.Encoding
		if c.Encoding == "" {
			d.violate("encoding", "must not be empty")
		}
	default:
		d.violate("counter", "set model or encoding")
	}
	if len(d.violations) > 0 {
		return compiler.CountRequest{}, &agentstate.InvalidArgumentError{Reason: ReasonInvalidArgument, Violations: d.violations}
	}
	return out, nil
}
