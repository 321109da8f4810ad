package compiler

import (
	"context"
	"fmt"
	"math"

	"github.com/contextcompiler/ctxc/internal/pipeline"
	"github.com/contextcompiler/ctxc/internal/providers"
	"github.com/contextcompiler/ctxc/internal/tokens"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// Request is what the state-taking use cases share: Budget and Compact take
// it as it is, Compile extends it.
type Request struct {
	Source StateSource
	// Profile names the profile to run; "" is the default.
	Profile string
	Options agentstate.Options
	// Scope is whose earlier work the run may reuse (the schedule cache):
	// the authenticated caller, so that no caller's compile can be answered
	// from another's; "" for a service without authentication.
	Scope string
}

// CompileRequest is one Compile.
type CompileRequest struct {
	Request
	// Attachments are documents attached to the call; one without content is
	// looked up by its id in the attachment store.
	Attachments []agentstate.Attachment
	// Input, when set, is a conversation in a provider's request format: it
	// replaces the state's log, and its system prompt and tools when it has them.
	Input *ProviderInput
	// TemplateVariables, when set, make the system prompt a template whose
	// {{name}} placeholders they fill (ExpandTemplate). Without them a prompt
	// with literal braces is sent as it is.
	TemplateVariables map[string]string
	// RequestBytes is the request's size on the wire, needed with
	// TemplateVariables: the expanded request may be no larger than one the
	// caller could have sent (Limits.MaxMessageBytes).
	RequestBytes int
	// Reserve, when set, is called before the request is expanded with the
	// bytes it will hold once expanded (its size plus the expanded prompt
	// in the state, the result and the reply), so that the caller can hold
	// them against its memory budget before they are made; its error is
	// returned as it is.
	Reserve func(bytes int64) error
	// ReserveInput, when set, is called before Input is imported with the
	// bytes importing and compiling it will hold beyond the request's own
	// (InputHeldBytes), and again before its texts are counted with what
	// counting its longest run without a space holds, each naming what
	// needs them (field), so that the caller can hold them against its
	// memory budget before they are made; its error is returned as it is.
	ReserveInput func(field string, bytes int64) error
	// OmitStablePrefix asks to leave out of the result the leading messages
	// the caller holds byte for byte.
	OmitStablePrefix bool
	// OmitStablePrefixReports asks, with OmitStablePrefix, to leave out of
	// the report's per-message entries those of the log messages left out.
	OmitStablePrefixReports bool
	// RenderIntoInput asks for Rendered to be Input's body with its
	// conversation replaced by the compiled one (providers.Splice), in
	// Input's format: what a proxy forwards; "" when the compile left every
	// message as it was, and the body goes as it is. The result's Messages
	// are then left out.
	RenderIntoInput bool
}

// ProviderInput is a conversation in a provider's request format.
type ProviderInput struct {
	Format agentstate.RenderFormat
	// Body is only read, never written: it may share the memory of the
	// request's string (the adapter's).
	Body []byte
}

// CompileResult is what Compile produced.
type CompileResult struct {
	// Messages is what the model should see (the system prompt first, as a
	// message with id SystemMessageID), without the OmittedMessages first ones.
	Messages []agentstate.Message
	// OmittedMessages is how many leading messages were left out because the
	// caller asked and holds them (OmitStablePrefix).
	OmittedMessages int
	Budget          *agentstate.Budget
	Report          *policies.Report
	// Rendered is the provider body Options.Render asked for, or "",
	// whatever the profile's stages.
	Rendered string
	// HistoryDiscarded says the state's history was discarded (Reset).
	HistoryDiscarded bool
}

// MaxGoalBytes bounds a Compile's goal (its description and success criteria
// together): it goes into the planner's prompt and every extract's query.
const MaxGoalBytes = 8 << 10

// Compile runs the whole profile and returns what the model should see.
// Attachments are resolved first (stored content for id-only ones), and a
// requested rendering is made from the result when the profile has no render
// stage, so neither depends on the profile's stage list.
func (s *Service) Compile(ctx context.Context, req CompileRequest) (*CompileResult, error) {
	in, err := s.load(req.Source)
	if err != nil {
		return nil, err
	}
	st, imported, err := s.compileInput(ctx, &req, in.state)
	if err != nil {
		return nil, err
	}
	if err := checkOmitStablePrefix(&req); err != nil {
		return nil, err
	}
	if err := checkRenderIntoInput(&req); err != nil {
		return nil, err
	}
	options := req.Options
	if req.RenderIntoInput {
		options.Render = agentstate.RenderNone // spliced below instead
	}
	if options.Render != agentstate.RenderNone && !req.OmitStablePrefix {
		// The reply carries the messages and the body: a body that cannot
		// fit beside them is refused before it is built, not when sent.
		options.MaxReplyBytes = s.limits.MaxMessageBytes
	}
	attachments, warnings, err := s.resolveAttachments(ctx, req.Attachments)
	if err != nil {
		return nil, err
	}
	res, err := s.catalog.Run(ctx, pipeline.Request{Profile: req.Profile, State: st, Options: options,
		Segment: pipeline.SegmentCompile, Attachments: attachments, CacheScope: req.Scope,
		ReportFromVerbatim: req.OmitStablePrefixReports && omitsStablePrefix(&req, st, in)})
	s.observe(ctx, compiledRun(UseCaseCompile, req.Profile, res, err))
	if err != nil {
		return nil, err
	}
	if req.Options.Goal != nil && len(res.Report.Artifacts) == 0 {
		// Only the plan stage reads the goal, and only about artifacts: say
		// so rather than take it without a word.
		warnings = append(warnings, fmt.Sprintf("goal not used: profile %q planned no artifact (tool result or attachment) in this call, and artifacts are what the goal weighs", res.Report.Profile))
	}
	if req.Source.Discarded {
		warnings = append(warnings, "state_blob could not be read and was discarded (reset_history): "+req.Source.DiscardReason+"; compiled from an empty history")
	}
	// The render stage's body, else one made here from the compiled view;
	// the run's own record of it stays as the stage left it.
	rendered := res.Work.Rendered
	if req.RenderIntoInput {
		body, changed, err := providers.Splice(req.Input.Format, req.Input.Body, imported, renderInput(res))
		if err != nil {
			return nil, err
		}
		if changed { // else "": the caller sends its body as it is
			rendered = string(body)
		}
	} else if rendered == "" && req.Options.Render != agentstate.RenderNone {
		// The profile has no render stage: render what it compiled, as the stage would.
		opts, in := res.Work.Options(), renderInput(res)
		in.MaxReplyBytes = opts.MaxReplyBytes
		body, omitted, err := providers.Render(opts.Render, in)
		if err != nil {
			return nil, err
		}
		rendered = string(body)
		warnings = append(warnings, omitted...)
	}
	res.Report.Warnings = append(res.Report.Warnings, warnings...)
	omitted := stablePrefix(&req, res, in)
	var messages []agentstate.Message
	if !req.RenderIntoInput { // the rendered body holds them
		messages = res.MessagesFrom(omitted)
	}
	return &CompileResult{
		Messages: messages, OmittedMessages: omitted,
		Budget: res.Work.Budget, Report: &res.Report, Rendered: rendered, HistoryDiscarded: in.discarded,
	}, nil
}

// compileInput applies what only Compile carries to a loaded state: a
// conversation in a provider's format (returned as imported, nil without
// one) and the system prompt's template variables. The state is copied,
// never changed.
func (s *Service) compileInput(ctx context.Context, req *CompileRequest, st *agentstate.State) (*agentstate.State, *providers.Imported, error) {
	out := *st
	var imported *providers.Imported
	if req.Input != nil {
		var err error
		if imported, err = s.importInput(ctx, req); err != nil {
			return nil, nil, err
		}
		if imported.SystemPrompt != "" {
			out.Context.SystemPrompt = imported.SystemPrompt
		}
		if len(imported.Tools) > 0 {
			out.Context.Tools = imported.Tools
		}
		out.Context.Messages = imported.Messages
		if req.RenderIntoInput {
			if err := bodyModel(&out.Model, imported); err != nil {
				return nil, nil, err
			}
		}
	}
	if len(req.TemplateVariables) > 0 {
		// The rest of the request plus the prompt within the message limit.
		rest := max(req.RequestBytes-len(out.Context.SystemPrompt), 0)
		maxBytes := max(s.limits.MaxMessageBytes-rest, 0)
		if size := ExpandedSize(out.Context.SystemPrompt, req.TemplateVariables); req.Reserve != nil && size <= maxBytes {
			hold := int64(req.RequestBytes) + expandedCopies*int64(size)
			if size >= tokens.LongPieceBytes {
				// The expansion may be one long piece to count: at most its size.
				hold += int64(size) * tokens.PieceWorkingBytes
			}
			if err := req.Reserve(hold); err != nil {
				return nil, nil, err
			}
		}
		prompt, err := ExpandTemplate(out.Context.SystemPrompt, req.TemplateVariables, maxBytes)
		if err != nil {
			return nil, nil, err
		}
		out.Context.SystemPrompt = prompt
	}
	return &out, imported, nil
}

// expandedCopies is how many times an expanded prompt is held at once: in
// the state, in the encoded reply, and in a rendered body.
const expandedCopies = 3

// bodyModel applies to a render_into_input call what the body says of its
// model, since the body is the request as the provider will see it: its
// model when the state names none, its answer limit as the output
// reservation and its window (Ollama's num_ctx), unless the state sets them.
func bodyModel(m *agentstate.ModelSpec, imported *providers.Imported) error {
	if m.Name == "" {
		if imported.Model == "" {
			return &agentstate.InvalidArgumentError{Reason: agentstate.ReasonInvalidState, Violations: []agentstate.FieldViolation{{
				Field: "input_json.model", Description: "required when state.model names no model: the model selects the tokenizer and the window"}}}
		}
		m.Name = imported.Model
	}
	if n := imported.MaxOutputTokens; m.MaxOutputTokens == nil && n > 0 && n <= math.MaxUint32 {
		v := uint32(n)
		m.MaxOutputTokens = &v
	}
	if n := imported.ContextWindow; m.ContextWindowTokens == nil && n > 0 && n <= math.MaxUint32 {
		v := uint32(n)
		m.ContextWindowTokens = &v
	}
	return nil
}

// checkRenderIntoInput refuses render_into_input without a provider body to
// render into, or with a rendering in another format; a system prompt from
// template variables is not the body's, so it cannot be kept in it either.
func checkRenderIntoInput(req *CompileRequest) error {
	if !req.RenderIntoInput {
		return nil
	}
	var field, description string
	switch {
	case req.Input == nil:
		field, description = "options.render_into_input", "needs input_json: the body to render into"
	case req.Options.Render != agentstate.RenderNone && req.Options.Render != req.Input.Format:
		field, description = "options.render", fmt.Sprintf("%s with render_into_input, which renders in input_format (%s): leave it unset or give the same", req.Options.Render, req.Input.Format)
	case len(req.TemplateVariables) > 0:
		field, description = "options.template_variables", "not allowed with render_into_input: the body's own system prompt is sent"
	default:
		return nil
	}
	return &agentstate.InvalidArgumentError{Reason: agentstate.ReasonInvalidState, Violations: []agentstate.FieldViolation{{Field: field, Description: description}}}
}

// checkOmitStablePrefix refuses omit_stable_prefix where the caller does not
// hold the log it would rebuild the context from.
func checkOmitStablePrefix(req *CompileRequest) error {
	if !req.OmitStablePrefix {
		if req.OmitStablePrefixReports {
			return &agentstate.InvalidArgumentError{Reason: agentstate.ReasonInvalidState,
				Violations: []agentstate.FieldViolation{{Field: "omit_stable_prefix_reports", Description: "only with omit_stable_prefix: the reports it leaves out are those of the messages omit_stable_prefix leaves out"}}}
		}
		return nil
	}
	var description string
	switch {
	case req.Source.FromBlob:
		description = "needs state, not state_blob: the caller must hold the messages left out"
	case req.Input != nil:
		description = "not allowed with input_json: the caller must hold the messages left out as state.context.messages"
	default:
		return nil
	}
	return &agentstate.InvalidArgumentError{Reason: agentstate.ReasonInvalidState,
		Violations: []agentstate.FieldViolation{{Field: "omit_stable_prefix", Description: description}}}
}

// stablePrefix is how many leading compiled messages to leave out because
// the caller asked and holds them byte for byte: its own system prompt and
// the log messages before the first changed index. A prompt expanded from
// template variables, or a discarded history, is not what the caller holds,
// so then nothing is left out.
func stablePrefix(req *CompileRequest, res *pipeline.Result, in loaded) int {
	if !omitsStablePrefix(req, res.Work.State(), in) {
		return 0
	}
	return res.Report.VerbatimPrefix
}

// omitsStablePrefix says whether a compile of st leaves its verbatim
// prefix out (stablePrefix): known before it runs, so that the run need not
// report on the messages left out (OmitStablePrefixReports).
func omitsStablePrefix(req *CompileRequest, st *agentstate.State, in loaded) bool {
	return req.OmitStablePrefix && !in.discarded && req.Source.State != nil &&
		st.Context.SystemPrompt == req.Source.State.Context.SystemPrompt
}

// BudgetResult is what Budget produced.
type BudgetResult struct {
	Budget *agentstate.Budget
	// Report holds, among the rest, each log message's tokens as sent.
	Report *policies.Report
}

// Budget runs the profile up to its budget stage.
func (s *Service) Budget(ctx context.Context, req Request) (*BudgetResult, error) {
	run, err := s.segment(req, pipeline.SegmentBudget)
	if err != nil {
		return nil, err
	}
	res, err := s.catalog.Run(ctx, run)
	observed := compiledRun(UseCaseBudget, req.Profile, res, err)
	observed.Before, observed.After = nil, nil // Budget produces no context
	s.observe(ctx, observed)
	if err != nil {
		return nil, err
	}
	return &BudgetResult{Budget: res.Work.Budget, Report: &res.Report}, nil
}

// CompactResult is what Compact produced.
type CompactResult struct {
	// State is the input state with the compaction persisted: summaries
	// appended to the log, masks recorded on the messages they hide.
	State *agentstate.State
	// Before and After are the budgets before and after compaction.
	Before, After *agentstate.Budget
	Report        *policies.Report
}

// Compact runs the profile's compaction and returns the state with it persisted.
func (s *Service) Compact(ctx context.Context, req Request) (*CompactResult, error) {
	run, err := s.segment(req, pipeline.SegmentCompact)
	if err != nil {
		return nil, err
	}
	// An explicit Compact compacts even when no trigger fired; its report
	// says which (CompactionReport.Forced).
	run.Force = true
	res, err := s.catalog.Compact(ctx, run)
	s.observe(ctx, compactedRun(UseCaseCompact, req.Profile, res, err))
	if err != nil {
		return nil, err
	}
	return &CompactResult{State: res.State, Before: res.Before, After: res.After, Report: &res.Report}, nil
}

// segment loads req's state into the run of a pipeline segment.
func (s *Service) segment(req Request, seg pipeline.Segment) (pipeline.Request, error) {
	in, err := s.load(req.Source)
	if err != nil {
		return pipeline.Request{}, err
	}
	return pipeline.Request{Profile: req.Profile, State: in.state, Options: req.Options, Segment: seg, CacheScope: req.Scope}, nil
}

// renderInput is what a provider body is rendered from: the compiled view of
// a run with its state, model and budget.
func renderInput(res *pipeline.Result) providers.Input {
	w := res.Work
	return providers.Input{State: w.State(), Model: w.Model(), Budget: w.Budget, View: w.Entries}
}
