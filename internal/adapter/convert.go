package adapter

import (
	"fmt"
	"log/slog"
	"math"
	"strconv"

	"google.golang.org/protobuf/types/known/timestamppb"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/adapter/stateref"
	"github.com/contextcompiler/ctxc/internal/compiler"
	"github.com/contextcompiler/ctxc/internal/tokens"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// decoder converts requests to domain types and validates them in the same
// pass, collecting every field violation so a client fixes all of them at once.
// Limit and precondition problems stop the pass: they are not field typos and
// the rest of an oversized or foreign-version state is not worth reading.
type decoder struct {
	limits compiler.Limits
	// reserve makes the call hold in-flight bytes for what a request
	// becomes before it is made (a decompressed state blob); nil reserves
	// nothing.
	reserve func(field string, bytes int64) error
	// grow makes the call hold bytes more than it does; nil holds nothing.
	grow func(field string, bytes int64) error
	// inflightLimit is MaxInflightBytes (0: none): what a request may not
	// need more than of it is refused rather than let past it.
	inflightLimit int64
	// longestPiece bounds the longest piece a text decoded so far
	// tokenizes to (tokens.LongestPiece), whose counting is held in flight.
	longestPiece int
	violations   []agentstate.FieldViolation
	// idsOptional accepts messages without ids (Route assigns them).
	idsOptional bool
	// parts is what is left of the part slab messages() allocated.
	parts []agentstate.Part
	// modelFromInput accepts a state whose model has no name: a Compile
	// with render_into_input takes it from input_json.
	modelFromInput bool

	// refs resolves base_state_ref; nil resolves none.
	refs *stateref.Store
	log  *slog.Logger
	// call is the request's call by reference, nil for a state sent whole.
	call *refCall
	// decoded is the state's log as decoded, kept with the state so that a
	// call naming it by reference decodes only what it appends; nil when
	// the log was not valid.
	decoded *decodedLog
	// given is the state as the caller gave it (whole, from its blob, or
	// resolved), with its reference and size when its bytes gave them.
	given     *ctxcv1.AgentState
	givenRef  string
	givenSize int64
}

func (d *decoder) violate(field, description string) {
	d.violations = append(d.violations, agentstate.FieldViolation{Field: field, Description: description})
}

// err returns the collected violations as one error, or nil.
func (d *decoder) err() error {
	if len(d.violations) == 0 {
		return nil
	}
	return &agentstate.InvalidArgumentError{Reason: agentstate.ReasonInvalidState, Violations: d.violations}
}

// elemPath names a message, or a part of one, in a request list. It is
// formatted only when a violation is reported: formatting a path for every
// message and part of a long log cost more than the rest of the decoding.
type elemPath struct {
	list  string
	index int
	part  int // -1 for the message itself
}

func (p elemPath) withPart(k int) elemPath { p.part = k; return p }

// field is the path of a field below the element ("" for the element itself).
func (p elemPath) field(suffix string) string {
	s := p.list + "[" + strconv.Itoa(p.index) + "]"
	if p.part >= 0 {
		s += ".parts[" + strconv.Itoa(p.part) + "]"
	}
	return s + suffix
}

// state converts a request's AgentState; a nil state is a violation of path.
// The schema version is the lifecycle check's business (compiler.StateSource).
func (d *decoder) state(path string, in *ctxcv1.AgentState) (*agentstate.State, error) {
	if in == nil {
		d.violate(path, "required")
		return nil, nil
	}
	c := in.GetContext()
	if n := len(c.GetMessages()); n > d.limits.MaxMessages {
		return nil, &agentstate.LimitError{Field: path + ".context.messages", Limit: d.limits.MaxMessages, Got: n}
	}
	if n := len(c.GetTools()); n > d.limits.MaxTools {
		return nil, &agentstate.LimitError{Field: path + ".context.tools", Limit: d.limits.MaxTools, Got: n}
	}
	for i, m := range c.GetMessages() {
		if n := len(m.GetParts()); n > d.limits.MaxPartsPerMessage {
			return nil, &agentstate.LimitError{Field: fmt.Sprintf("%s.context.messages[%d].parts", path, i), Limit: d.limits.MaxPartsPerMessage, Got: n}
		}
	}
	st := &agentstate.State{
		SchemaVersion: in.GetSchemaVersion(),
		AgentID:       in.GetAgentId(),
		Model:         d.model(path+".model", in.GetModel()),
		Execution:     d.execution(path+".execution", in.GetExecution()),
	}
	d.piece(c.GetSystemPrompt())
	st.Context = agentstate.Context{
		Messages:       d.messages(path+".context.messages", c.GetMessages()),
		SystemPrompt:   c.GetSystemPrompt(),
		Tools:          d.tools(path+".context.tools", c.GetTools()),
		ResponseFormat: c.GetResponseFormat(),
		Metadata:       c.GetMetadata(),
	}
	return st, nil
}

func (d *decoder) model(path string, in *ctxcv1.ModelSpec) agentstate.ModelSpec {
	if in.GetName() == "" && !d.modelFromInput {
		d.violate(path+".name", "required: the model name selects the tokenizer and the window")
	}
	if in == nil {
		return agentstate.ModelSpec{}
	}
	return agentstate.ModelSpec{
		Name:                in.GetName(),
		Provider:            in.GetProvider(),
		ContextWindowTokens: optionalUint32(in.ContextWindowTokenCount),
		MaxOutputTokens:     optionalUint32(in.MaxOutputTokenCount),
	}
}

func (d *decoder) execution(path string, in *ctxcv1.Execution) agentstate.Execution {
	st := in.GetStatus()
	if st < ctxcv1.ExecutionStatus_EXECUTION_STATUS_UNSPECIFIED || st > ctxcv1.ExecutionStatus_EXECUTION_STATUS_FAILED {
		d.violate(path+".status", "unknown execution status "+strconv.Itoa(int(st)))
	}
	return agentstate.Execution{ID: in.GetId(), StepIndex: in.GetStepIndex(), Status: agentstate.ExecutionStatus(st)}
}

func (d *decoder) tools(path string, in []*ctxcv1.ToolDefinition) []agentstate.ToolDefinition {
	if len(in) == 0 {
		return nil
	}
	out := make([]agentstate.ToolDefinition, len(in))
	for i, t := range in {
		if t.GetName() == "" {
			d.violate(fmt.Sprintf("%s[%d].name", path, i), "required")
		}
		out[i] = agentstate.ToolDefinition{Name: t.GetName(), Description: t.GetDescription(), ParametersJSON: t.GetParametersJson()}
	}
	return out
}

// messages converts a log. Ids must be present and unique. A tool result whose
// call is not in the log is accepted: normalization repairs it.
func (d *decoder) messages(path string, in []*ctxcv1.Message) []agentstate.Message {
	if len(in) == 0 {
		return nil
	}
	var base *decodedLog
	if d.call != nil {
		base, _ = d.call.base.Decoded.(*decodedLog)
	}
	if !base.extends(in) {
		base = nil
	}
	from := 0
	if base != nil {
		from = len(base.messages)
	}
	tail := in[from:]
	out := make([]agentstate.Message, len(tail))
	seen := make(map[string]int, len(tail))
	total := 0
	for _, m := range tail {
		total += len(m.GetParts())
	}
	// One allocation for every message's parts; each message gets a slice
	// capped at its own length, so a policy that appends copies first.
	d.parts = make([]agentstate.Part, total)
	violations, longest := len(d.violations), d.longestPiece
	d.longestPiece = 0
	for j, m := range tail {
		i := from + j
		at := elemPath{list: path, index: i, part: -1}
		if id := m.GetId(); id == "" {
			if !d.idsOptional {
				d.violate(at.field(".id"), "required")
			}
		} else if k, dup := base.id(id); dup {
			d.violate(at.field(".id"), fmt.Sprintf("duplicate id %q (also %s[%d].id)", id, path, k))
		} else if k, dup := seen[id]; dup {
			d.violate(at.field(".id"), fmt.Sprintf("duplicate id %q (also %s[%d].id)", id, path, k))
		} else {
			seen[id] = i
		}
		out[j] = d.message(at, m)
	}
	tailLongest := d.longestPiece
	d.longestPiece = max(longest, tailLongest)
	if len(d.violations) > violations || d.idsOptional {
		return out // the call fails, or its log is not a state's: nothing to keep
	}
	if d.refs.Enabled() { // only a log kept beside its state is counted again
		agentstate.MemoizeCounts(out)
	}
	if base == nil {
		d.decoded = newDecodedLog(in, out, seen, total, tailLongest)
		return out
	}
	d.decoded = base.extend(in, out, seen, total, tailLongest)
	d.longestPiece = max(d.longestPiece, d.decoded.longest)
	return d.decoded.messages
}

func (d *decoder) message(path elemPath, in *ctxcv1.Message) agentstate.Message {
	role := in.GetRole()
	switch {
	case role == ctxcv1.Role_ROLE_UNSPECIFIED:
		d.violate(path.field(".role"), "required")
	case role < 0 || role > ctxcv1.Role_ROLE_TOOL:
		d.violate(path.field(".role"), "unknown role "+strconv.Itoa(int(role)))
	}
	if k := in.GetKind(); k < 0 || k > ctxcv1.MessageKind_MESSAGE_KIND_PLACEHOLDER {
		d.violate(path.field(".kind"), "unknown message kind "+strconv.Itoa(int(k)))
	}
	if len(in.GetParts()) == 0 {
		d.violate(path.field(".parts"), "at least one part is required")
	}
	m := agentstate.Message{
		ID:               in.GetId(),
		Role:             agentstate.Role(role),
		Kind:             agentstate.MessageKind(in.GetKind()),
		Pinned:           in.GetPinned(),
		Importance:       in.GetImportance(),
		ExecutionID:      in.GetExecutionId(),
		Metadata:         in.GetMetadata(),
		CoversMessageIDs: in.GetCoversMessageIds(),
	}
	if in.GetImportance() > 100 {
		d.violate(path.field(".importance"), "must be between 0 and 100")
	}
	if u := in.GetUsage(); u != nil {
		m.Usage = &agentstate.Usage{InputTokens: u.GetInputTokenCount(), CachedInputTokens: u.GetCachedInputTokenCount(), OutputTokens: u.GetOutputTokenCount()}
	}
	if mk := in.GetMask(); mk != nil {
		m.Mask = &agentstate.Mask{Reason: mk.GetReason(), Placeholder: mk.GetPlaceholder(), OriginalTokenCount: mk.GetOriginalTokenCount()}
	}
	if ts := in.GetCreateTime(); ts != nil {
		if ts.CheckValid() != nil {
			d.violate(path.field(".create_time"), "invalid timestamp: seconds must be within years 1-9999 and nanos within [0, 1e9)")
		} else {
			t := ts.AsTime()
			m.CreateTime = &t
		}
	}
	if n := len(in.GetParts()); n > 0 {
		m.Parts, d.parts = d.parts[:n:n], d.parts[n:]
		for k, p := range in.GetParts() {
			m.Parts[k] = d.part(path.withPart(k), p, role == ctxcv1.Role_ROLE_TOOL)
		}
	}
	return m
}

// piece notes a text's longest piece.
func (d *decoder) piece(s string) { d.longestPiece = max(d.longestPiece, tokens.LongestPiece(s)) }

func (d *decoder) part(path elemPath, in *ctxcv1.Part, inToolMessage bool) agentstate.Part {
	var p agentstate.Part
	switch c := in.GetContent().(type) {
	case *ctxcv1.Part_Text:
		p = agentstate.Part{Kind: agentstate.PartText, Text: c.Text}
		d.piece(c.Text)
	case *ctxcv1.Part_ToolCall:
		tc := c.ToolCall
		if tc.GetId() == "" {
			d.violate(path.field(".tool_call.id"), "required")
		}
		if tc.GetName() == "" {
			d.violate(path.field(".tool_call.name"), "required")
		}
		p = agentstate.Part{Kind: agentstate.PartToolCall, ToolCall: agentstate.ToolCall{ID: tc.GetId(), Name: tc.GetName(), ArgumentsJSON: tc.GetArgumentsJson()}}
		d.piece(tc.GetArgumentsJson())
	case *ctxcv1.Part_ToolResult:
		tr := c.ToolResult
		if tr.GetToolCallId() == "" {
			d.violate(path.field(".tool_result.tool_call_id"), "required: the id of the tool call this result answers")
		}
		p = agentstate.Part{Kind: agentstate.PartToolResult, ToolResult: agentstate.ToolResult{ToolCallID: tr.GetToolCallId(), Name: tr.GetName(), Content: tr.GetContent(), IsError: tr.GetIsError()}}
		d.piece(tr.GetContent())
	case *ctxcv1.Part_Image:
		p = agentstate.Part{Kind: agentstate.PartImage, Image: d.image(path.field(".image"), c.Image)}
	case *ctxcv1.Part_Reasoning:
		p = agentstate.Part{Kind: agentstate.PartReasoning, Reasoning: agentstate.Reasoning{Text: c.Reasoning.GetText(), Signature: c.Reasoning.GetSignature()}}
		d.piece(c.Reasoning.GetText())
	default:
		d.violate(path.field(""), "no content: set one of text, tool_call, tool_result, image, reasoning")
		return p
	}
	if inToolMessage && p.Kind != agentstate.PartToolResult {
		d.violate(path.field(""), "a ROLE_TOOL message holds only tool_result parts, not "+p.Kind.String())
	}
	return p
}

func (d *decoder) image(path string, in *ctxcv1.Image) agentstate.Image {
	img := agentstate.Image{MediaType: in.GetMediaType()}
	switch s := in.GetSource().(type) {
	case *ctxcv1.Image_Url:
		img.Source, img.URL = agentstate.ImageSourceURL, s.Url
	case *ctxcv1.Image_Data:
		img.Source, img.Data = agentstate.ImageSourceData, s.Data
		if img.MediaType == "" {
			d.violate(path+".media_type", "required with data")
		}
	default:
		d.violate(path, "no source: set url or data")
	}
	return img
}

// options converts per-call options.
func (d *decoder) options(path string, in *ctxcv1.CompileOptions) agentstate.Options {
	if v := in.GetView(); v < 0 || v > ctxcv1.View_VIEW_CONVERSATION {
		d.violate(path+".view", "unknown view "+strconv.Itoa(int(v)))
	}
	if in == nil {
		return agentstate.Options{}
	}
	o := agentstate.Options{
		View:                 agentstate.View(in.GetView()),
		ReservedOutputTokens: optionalUint32(in.ReservedOutputTokenCount),
		MaxContextTokens:     optionalUint32(in.MaxContextTokenCount),
		Render:               agentstate.RenderFormat(in.GetRender()),
	}
	if r := in.GetRender(); r < 0 || r > ctxcv1.RenderFormat_RENDER_FORMAT_OPENAI_RESPONSES {
		d.violate(path+".render", "unknown render format "+strconv.Itoa(int(r)))
	}
	if in.SoftThresholdRatio != nil {
		r := *in.SoftThresholdRatio
		if !(r > 0 && r <= 1) {
			d.violate(path+".soft_threshold_ratio", "must be in (0, 1]")
		}
		o.SoftThresholdRatio = &r
	}
	return o
}

func optionalUint32(p *uint32) *uint32 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// The other direction: domain to protobuf. These never fail; the pipeline only
// produces values the domain types can hold.

// StateToProto is the API's form of a domain state.
func StateToProto(in *agentstate.State) *ctxcv1.AgentState {
	if in == nil {
		return nil
	}
	out := &ctxcv1.AgentState{
		SchemaVersion: in.SchemaVersion,
		AgentId:       in.AgentID,
		Model: &ctxcv1.ModelSpec{
			Name:                    in.Model.Name,
			Provider:                in.Model.Provider,
			ContextWindowTokenCount: optionalUint32(in.Model.ContextWindowTokens),
			MaxOutputTokenCount:     optionalUint32(in.Model.MaxOutputTokens),
		},
	}
	// An empty context or execution carries no meaning, so it is left unset.
	if c := in.Context; len(c.Messages) > 0 || c.SystemPrompt != "" || len(c.Tools) > 0 || c.ResponseFormat != "" || len(c.Metadata) > 0 {
		out.Context = &ctxcv1.AgentContext{
			Messages:       messagesToProto(c.Messages),
			SystemPrompt:   c.SystemPrompt,
			Tools:          toolsToProto(c.Tools),
			ResponseFormat: c.ResponseFormat,
			Metadata:       c.Metadata,
		}
	}
	if e := in.Execution; e != (agentstate.Execution{}) {
		out.Execution = &ctxcv1.Execution{Id: e.ID, StepIndex: e.StepIndex, Status: ctxcv1.ExecutionStatus(e.Status)}
	}
	return out
}

func toolsToProto(in []agentstate.ToolDefinition) []*ctxcv1.ToolDefinition {
	if len(in) == 0 {
		return nil
	}
	out := make([]*ctxcv1.ToolDefinition, len(in))
	for i, t := range in {
		out[i] = &ctxcv1.ToolDefinition{Name: t.Name, Description: t.Description, ParametersJson: t.ParametersJSON}
	}
	return out
}

func messagesToProto(in []agentstate.Message) []*ctxcv1.Message {
	if len(in) == 0 {
		return nil
	}
	out := make([]*ctxcv1.Message, len(in))
	for i := range in {
		out[i] = messageToProto(&in[i])
	}
	return out
}

func messageToProto(m *agentstate.Message) *ctxcv1.Message {
	out := &ctxcv1.Message{
		Id:               m.ID,
		Role:             ctxcv1.Role(m.Role),
		Kind:             ctxcv1.MessageKind(m.Kind),
		Pinned:           m.Pinned,
		Importance:       m.Importance,
		ExecutionId:      m.ExecutionID,
		Metadata:         m.Metadata,
		CoversMessageIds: m.CoversMessageIDs,
	}
	if m.Usage != nil {
		out.Usage = &ctxcv1.Usage{InputTokenCount: m.Usage.InputTokens, CachedInputTokenCount: m.Usage.CachedInputTokens, OutputTokenCount: m.Usage.OutputTokens}
	}
	if m.Mask != nil {
		out.Mask = &ctxcv1.Mask{Reason: m.Mask.Reason, Placeholder: m.Mask.Placeholder, OriginalTokenCount: m.Mask.OriginalTokenCount}
	}
	if m.CreateTime != nil {
		out.CreateTime = timestamppb.New(*m.CreateTime)
	}
	if len(m.Parts) > 0 {
		out.Parts = make([]*ctxcv1.Part, len(m.Parts))
		for i := range m.Parts {
			out.Parts[i] = partToProto(&m.Parts[i])
		}
	}
	return out
}

func partToProto(p *agentstate.Part) *ctxcv1.Part {
	switch p.Kind {
	case agentstate.PartText:
		return &ctxcv1.Part{Content: &ctxcv1.Part_Text{Text: p.Text}}
	case agentstate.PartToolCall:
		c := p.ToolCall
		return &ctxcv1.Part{Content: &ctxcv1.Part_ToolCall{ToolCall: &ctxcv1.ToolCall{Id: c.ID, Name: c.Name, ArgumentsJson: c.ArgumentsJSON}}}
	case agentstate.PartToolResult:
		r := p.ToolResult
		return &ctxcv1.Part{Content: &ctxcv1.Part_ToolResult{ToolResult: &ctxcv1.ToolResult{ToolCallId: r.ToolCallID, Name: r.Name, Content: r.Content, IsError: r.IsError}}}
	case agentstate.PartImage:
		img := &ctxcv1.Image{MediaType: p.Image.MediaType}
		switch p.Image.Source {
		case agentstate.ImageSourceURL:
			img.Source = &ctxcv1.Image_Url{Url: p.Image.URL}
		case agentstate.ImageSourceData:
			img.Source = &ctxcv1.Image_Data{Data: p.Image.Data}
		}
		return &ctxcv1.Part{Content: &ctxcv1.Part_Image{Image: img}}
	case agentstate.PartReasoning:
		return &ctxcv1.Part{Content: &ctxcv1.Part_Reasoning{Reasoning: &ctxcv1.Reasoning{Text: p.Reasoning.Text, Signature: p.Reasoning.Signature}}}
	}
	return &ctxcv1.Part{}
}

func budgetToProto(b *agentstate.Budget) *ctxcv1.TokenBudget {
	if b == nil {
		return nil
	}
	return &ctxcv1.TokenBudget{
		ContextWindowTokenCount:  u32(b.ContextWindow),
		UsedTokenCount:           u32(b.Used),
		ReservedOutputTokenCount: u32(b.ReservedOutput),
		ReservedSystemTokenCount: u32(b.ReservedSystem),
		SoftThresholdTokenCount:  u32(b.SoftThreshold),
		RemainingTokenCount:      u32(b.Remaining),
		OverSoftThreshold:        b.OverSoftThreshold,
		ShouldCompact:            b.ShouldCompact,
		Provenance:               ctxcv1.TokenCountProvenance(b.Provenance),
		Counter:                  b.Counter,
		Breakdown: &ctxcv1.TokenBreakdown{
			SystemPromptTokenCount: u32(b.Breakdown.SystemPrompt),
			ToolsTokenCount:        u32(b.Breakdown.Tools),
			PinnedTokenCount:       u32(b.Breakdown.Pinned),
			SummariesTokenCount:    u32(b.Breakdown.Summaries),
			ConversationTokenCount: u32(b.Breakdown.Conversation),
			ToolTraceTokenCount:    u32(b.Breakdown.ToolTrace),
		},
	}
}

func reportToProto(r *policies.Report) *ctxcv1.CompileReport {
	out := &ctxcv1.CompileReport{
		Profile:                   r.Profile,
		Messages:                  messageReportsToProto(r.Messages),
		Warnings:                  r.Warnings,
		FirstChangedIndex:         u32(r.FirstChangedIndex),
		Compacted:                 r.Compacted,
		OmittedMessageReportCount: u32(r.OmittedMessageReports),
	}
	if len(r.Stages) > 0 {
		out.Stages = make([]*ctxcv1.StageReport, len(r.Stages))
		for i, s := range r.Stages {
			out.Stages[i] = &ctxcv1.StageReport{
				Stage: s.Stage, Policy: s.Policy, DurationMicros: s.DurationMicros,
				MessagesIn: u32(s.MessagesIn), MessagesOut: u32(s.MessagesOut),
				TokensIn: u32(s.TokensIn), TokensOut: u32(s.TokensOut),
				MessagesAffected: u32(s.MessagesAffected),
				Degraded:         s.Degraded, DegradedReason: s.DegradedReason, Skipped: s.Skipped,
				Detail: s.Detail, CompactionPoint: u32(s.CompactionPoint),
			}
		}
	}
	if len(r.Repairs) > 0 {
		out.Repairs = make([]*ctxcv1.Repair, len(r.Repairs))
		for i, rp := range r.Repairs {
			out.Repairs[i] = &ctxcv1.Repair{Kind: rp.Kind, MessageId: rp.MessageID, Detail: rp.Detail}
		}
	}
	out.PlanningUsed, out.TotalCostUsd = r.PlanningUsed, r.TotalCostUSD
	for _, a := range r.Artifacts {
		out.Artifacts = append(out.Artifacts, &ctxcv1.ArtifactUsage{ArtifactId: a.ArtifactID, Source: a.Source, ArtifactType: a.Type,
			Strategy: a.Strategy, OriginalSize: u32(a.OriginalSize), ProcessedSize: u32(a.ProcessedSize), CacheHit: a.CacheHit})
	}
	for _, u := range r.ModelUsage {
		out.ModelUsage = append(out.ModelUsage, &ctxcv1.ModelUsage{Task: u.Task, Model: u.Model, CallCount: u32(u.Calls),
			InputTokenCount: u32(u.InputTokens), OutputTokenCount: u32(u.OutputTokens), CostUsd: u.CostUSD})
	}
	if c := r.Cache; c != (policies.CacheStats{}) {
		out.Cache = &ctxcv1.CacheStats{HitCount: u32(c.Hits), MissCount: u32(c.Misses), ErrorCount: u32(c.Errors)}
	}
	out.Compaction = compactionToProto(&r.Compaction)
	return out
}

// compactionToProto converts the compaction report; nil for a profile that
// has no compaction policies (nothing was measured against a trigger).
func compactionToProto(c *policies.CompactionReport) *ctxcv1.CompactionReport {
	if c.TriggerTokens == 0 && c.TargetTokens == 0 && len(c.Points) == 0 && !c.Forced {
		return nil
	}
	out := &ctxcv1.CompactionReport{
		TriggerTokenCount: u32(c.TriggerTokens), TargetTokenCount: u32(c.TargetTokens), ReachedTokenCount: u32(c.ReachedTokens),
		TriggerFired: c.TriggerFired, Forced: c.Forced,
	}
	for _, p := range c.Points {
		out.Points = append(out.Points, &ctxcv1.CompactionPoint{
			AfterMessageId: p.AfterMessageID, Reason: p.Reason, Intake: p.Intake,
			TokenCountBefore: u32(p.TokensBefore), TokenCountAfter: u32(p.TokensAfter), TargetTokenCount: u32(p.TargetTokens), Stable: p.Stable,
		})
	}
	return out
}

func messageReportsToProto(in []policies.MessageReport) []*ctxcv1.MessageReport {
	if len(in) == 0 {
		return nil
	}
	// One allocation for all reports: there is one per log message.
	slab := make([]ctxcv1.MessageReport, len(in))
	out := make([]*ctxcv1.MessageReport, len(in))
	for i, m := range in {
		r := &slab[i]
		r.MessageId, r.Disposition, r.TokenCount = m.MessageID, ctxcv1.Disposition(m.Disposition), u32(m.Tokens)
		r.Provenance, r.Reason, r.Policy = ctxcv1.TokenCountProvenance(m.Provenance), m.Reason, m.Policy
		out[i] = r
	}
	return out
}

func profileToProto(p *compiler.ProfileInfo) *ctxcv1.Profile {
	out := &ctxcv1.Profile{Name: p.Name, Description: p.Description, Default: p.Default, Source: p.Source,
		RecentTurns: u32(p.RecentTurns), BoundedLog: p.BoundedLog, CompactOnExecutionEnd: p.CompactOnExecutionEnd,
		CompactOnExecutionError: p.CompactOnExecutionError, FitTargetRatio: p.FitTargetRatio, AttachmentPolicy: p.AttachmentPolicy}
	out.Stages = make([]*ctxcv1.ProfileStage, len(p.Stages))
	for i, s := range p.Stages {
		out.Stages[i] = &ctxcv1.ProfileStage{Stage: s.Stage, Policy: s.Policy, SettingsJson: s.SettingsJSON}
	}
	return out
}

// u32 clamps a count into the wire type; counts are never negative in practice,
// but a clamped value is better than a wrapped one.
func u32(n int) uint32 {
	switch {
	case n < 0:
		return 0
	case uint64(n) > math.MaxUint32:
		return math.MaxUint32
	}
	return uint32(n)
}
