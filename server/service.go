package server

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/contextcompiler/ctxc/compiler/routing"
	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/pipeline"
)

// Compiler runs profiles; *pipeline.Catalog is the production one.
type Compiler interface {
	Run(ctx context.Context, req pipeline.Request) (*pipeline.Result, error)
	Compact(ctx context.Context, req pipeline.Request) (*pipeline.CompactResult, error)
	Profiles() []pipeline.ProfileInfo
	Profile(name string) (pipeline.ProfileInfo, error)
	DefaultProfile() string
}

// TokenCounters finds a counter by model or by encoding; *tokens.Service is the
// production one.
type TokenCounters interface {
	Resolve(spec policies.ModelSpec) (policies.ModelInfo, policies.TokenCounter, error)
	CounterForEncoding(name string) (policies.TokenCounter, error)
}

// Config holds the service's dependencies.
type Config struct {
	Compiler Compiler
	Counters TokenCounters
	// Limits default to DefaultLimits() when zero.
	Limits Limits
	// Logger receives internal errors with their detail; slog.Default() when nil.
	Logger *slog.Logger
}

// Service implements ctxcv1.ContextCompilerServiceServer. Each handler
// validates and converts the request, runs the pipeline, and converts back;
// every error goes through toStatus.
type Service struct {
	ctxcv1.UnimplementedContextCompilerServiceServer
	compiler Compiler
	counters TokenCounters
	limits   Limits
	log      *slog.Logger
}

var _ ctxcv1.ContextCompilerServiceServer = (*Service)(nil)

// New builds the service.
func New(cfg Config) (*Service, error) {
	if cfg.Compiler == nil || cfg.Counters == nil {
		return nil, errors.New("server: Config.Compiler and Config.Counters are required")
	}
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits()
	}
	if cfg.Limits.MaxMessageBytes <= 0 {
		cfg.Limits.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Service{compiler: cfg.Compiler, counters: cfg.Counters, limits: cfg.Limits, log: cfg.Logger}, nil
}

// Compile runs the whole profile and returns what the model should see.
func (s *Service) Compile(ctx context.Context, req *ctxcv1.CompileRequest) (*ctxcv1.CompileResponse, error) {
	src := stateSource{state: req.GetState(), blob: req.GetStateBlob(), model: req.GetModel(), reset: req.GetResetHistory()}
	preq, loaded, err := s.compileRequest(req, src)
	if err != nil {
		return nil, toStatus(ctx, s.log, "Compile", err)
	}
	res, err := s.compiler.Run(ctx, preq)
	if err != nil {
		return nil, toStatus(ctx, s.log, "Compile", err)
	}
	omitted := stablePrefix(req, res, loaded)
	return &ctxcv1.CompileResponse{
		Messages:            compiledToProto(res.MessagesFrom(omitted), req.GetState().GetContext().GetMessages()),
		Budget:              budgetToProto(res.Work.Budget),
		Report:              reportToProto(&res.Report),
		HistoryDiscarded:    loaded.discarded,
		Rendered:            res.Work.Rendered,
		OmittedMessageCount: u32(omitted),
	}, nil
}

// stablePrefix is how many leading compiled messages to leave out of the
// response because the caller asked and holds them byte for byte: its own
// system prompt and the log messages before the first changed index. A prompt
// expanded from template variables, or a discarded history, is not what the
// caller holds, so then nothing is left out.
func stablePrefix(req *ctxcv1.CompileRequest, res *pipeline.Result, loaded loadedState) int {
	if !req.GetOmitStablePrefix() || loaded.discarded ||
		res.Work.State.Context.SystemPrompt != req.GetState().GetContext().GetSystemPrompt() {
		return 0
	}
	return res.Report.FirstChangedIndex
}

// compileRequest is pipelineRequest plus what only Compile carries: provider
// input, template variables and attachments.
func (s *Service) compileRequest(req *ctxcv1.CompileRequest, src stateSource) (pipeline.Request, loadedState, error) {
	preq, loaded, err := s.pipelineRequest(src, req.GetProfile(), req.GetOptions(), pipeline.SegmentCompile)
	if err != nil {
		return preq, loaded, err
	}
	d := decoder{limits: s.limits}
	if preq.State, err = compileInput(&d, req, preq.State); err != nil {
		return preq, loaded, err
	}
	preq.Attachments = d.attachments("attachments", req.GetAttachments())
	if req.GetOmitStablePrefix() {
		// The caller must hold the log it would rebuild the context from.
		switch {
		case len(req.GetStateBlob()) > 0:
			d.violate("omit_stable_prefix", "needs state, not state_blob: the caller must hold the messages left out")
		case req.GetInputFormat() != ctxcv1.InputFormat_INPUT_FORMAT_UNSPECIFIED:
			d.violate("omit_stable_prefix", "not allowed with input_json: the caller must hold the messages left out as state.context.messages")
		}
	}
	return preq, loaded, d.err()
}

// Budget runs the profile up to its budget stage.
func (s *Service) Budget(ctx context.Context, req *ctxcv1.BudgetRequest) (*ctxcv1.BudgetResponse, error) {
	preq, _, err := s.pipelineRequest(stateSource{state: req.GetState()}, req.GetProfile(), req.GetOptions(), pipeline.SegmentBudget)
	if err != nil {
		return nil, toStatus(ctx, s.log, "Budget", err)
	}
	res, err := s.compiler.Run(ctx, preq)
	if err != nil {
		return nil, toStatus(ctx, s.log, "Budget", err)
	}
	report := reportToProto(&res.Report)
	return &ctxcv1.BudgetResponse{Budget: budgetToProto(res.Work.Budget), Messages: report.GetMessages(), Report: report}, nil
}

// Compact runs the profile's compaction and returns the state with it persisted.
func (s *Service) Compact(ctx context.Context, req *ctxcv1.CompactRequest) (*ctxcv1.CompactResponse, error) {
	preq, _, err := s.pipelineRequest(stateSource{state: req.GetState()}, req.GetProfile(), req.GetOptions(), pipeline.SegmentCompact)
	if err != nil {
		return nil, toStatus(ctx, s.log, "Compact", err)
	}
	res, err := s.compiler.Compact(ctx, preq)
	if err != nil {
		return nil, toStatus(ctx, s.log, "Compact", err)
	}
	return &ctxcv1.CompactResponse{
		State:        stateToProto(res.State),
		BudgetBefore: budgetToProto(res.Before),
		BudgetAfter:  budgetToProto(res.After),
		Report:       reportToProto(&res.Report),
	}, nil
}

// Route appends a user turn, a step's output or an event to the log. When the
// input ends an execution and the profile asks for it, the new state is
// compacted before it is returned.
func (s *Service) Route(ctx context.Context, req *ctxcv1.RouteRequest) (*ctxcv1.RouteResponse, error) {
	d := decoder{limits: s.limits}
	loaded, err := loadState(&d, stateSource{state: req.GetState(), blob: req.GetStateBlob(), model: req.GetModel(), reset: req.GetResetHistory()})
	if err == nil {
		err = d.err()
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, "Route", err)
	}
	profile, err := s.compiler.Profile(req.GetProfile())
	if err != nil {
		return nil, toStatus(ctx, s.log, "Route", err)
	}
	in, err := routeInput(&decoder{limits: s.limits, idsOptional: true}, req)
	if err != nil {
		return nil, toStatus(ctx, s.log, "Route", err)
	}
	res, err := routing.Route(loaded.state, in, routing.Options{Now: time.Now})
	if err != nil {
		return nil, toStatus(ctx, s.log, "Route", err)
	}
	resp := &ctxcv1.RouteResponse{
		AppendedMessageIds: res.AppendedIDs, ExecutionEnded: res.ExecutionEnded, HistoryDiscarded: loaded.discarded,
		InterruptedExecutionId: res.InterruptedExecutionID, SystemPromptReplaced: res.SystemPromptReplaced,
	}
	state := res.State
	if res.ExecutionEnded && profile.CompactOnExecutionEnd {
		state, resp.CompactionReport = s.compactAtBoundary(ctx, profile.Name, state)
	}
	if err := s.putState(resp, state, loaded.fromBlob || req.GetWantStateBlob()); err != nil {
		return nil, toStatus(ctx, s.log, "Route", err)
	}
	return resp, nil
}

// CountTokens counts each text and message with the model's or encoding's counter.
func (s *Service) CountTokens(ctx context.Context, req *ctxcv1.CountTokensRequest) (*ctxcv1.CountTokensResponse, error) {
	counter, msgs, err := s.countRequest(req)
	if err != nil {
		return nil, toStatus(ctx, s.log, "CountTokens", err)
	}
	textProvenance := counterProvenance(counter)
	resp := &ctxcv1.CountTokensResponse{Counter: counter.Name()}
	total, worst := 0, policies.ProvenanceUnspecified
	for _, t := range req.GetTexts() {
		n := counter.CountText(t)
		total += n
		worst = max(worst, textProvenance)
		resp.Texts = append(resp.Texts, &ctxcv1.TokenCount{TokenCount: u32(n), Provenance: ctxcv1.TokenCountProvenance(textProvenance)})
	}
	for i := range msgs {
		n, p := counter.CountMessage(&msgs[i])
		total += n
		worst = max(worst, p)
		resp.Messages = append(resp.Messages, &ctxcv1.TokenCount{TokenCount: u32(n), Provenance: ctxcv1.TokenCountProvenance(p)})
	}
	resp.TotalTokenCount, resp.Provenance = u32(total), ctxcv1.TokenCountProvenance(worst)
	return resp, nil
}

// ListProfiles describes every profile the server knows.
func (s *Service) ListProfiles(ctx context.Context, _ *ctxcv1.ListProfilesRequest) (*ctxcv1.ListProfilesResponse, error) {
	profiles := s.compiler.Profiles()
	resp := &ctxcv1.ListProfilesResponse{Profiles: make([]*ctxcv1.Profile, len(profiles))}
	for i := range profiles {
		resp.Profiles[i] = profileToProto(&profiles[i])
	}
	return resp, nil
}

// pipelineRequest validates and converts what the state-taking RPCs share.
func (s *Service) pipelineRequest(src stateSource, profile string, opts *ctxcv1.CompileOptions, seg pipeline.Segment) (pipeline.Request, loadedState, error) {
	d := decoder{limits: s.limits}
	loaded, err := loadState(&d, src)
	if err != nil {
		return pipeline.Request{}, loadedState{}, err
	}
	options := d.options("options", opts)
	if err := d.err(); err != nil {
		return pipeline.Request{}, loadedState{}, err
	}
	return pipeline.Request{Profile: profile, State: loaded.state, Options: options, Segment: seg}, loaded, nil
}

// countRequest validates a CountTokens request and finds its counter.
func (s *Service) countRequest(req *ctxcv1.CountTokensRequest) (policies.TokenCounter, []policies.Message, error) {
	if n := len(req.GetMessages()) + len(req.GetTexts()); n > s.limits.MaxMessages {
		return nil, nil, &policies.LimitError{Field: "texts+messages", Limit: s.limits.MaxMessages, Got: n}
	}
	for i, m := range req.GetMessages() {
		if n := len(m.GetParts()); n > s.limits.MaxPartsPerMessage {
			return nil, nil, &policies.LimitError{Field: "messages[" + strconv.Itoa(i) + "].parts", Limit: s.limits.MaxPartsPerMessage, Got: n}
		}
	}
	d := decoder{limits: s.limits}
	msgs := d.messages("messages", req.GetMessages())
	switch c := req.GetCounter().(type) {
	case *ctxcv1.CountTokensRequest_Model:
		if c.Model == "" {
			d.violate("model", "must not be empty")
		}
	case *ctxcv1.CountTokensRequest_Encoding:
		if c.Encoding == "" {
			d.violate("encoding", "must not be empty")
		}
	default:
		d.violate("counter", "set model or encoding")
	}
	if len(d.violations) > 0 {
		return nil, nil, &policies.InvalidArgumentError{Reason: reasonInvalidArgument, Violations: d.violations}
	}
	if enc, ok := req.GetCounter().(*ctxcv1.CountTokensRequest_Encoding); ok {
		counter, err := s.counters.CounterForEncoding(enc.Encoding)
		return counter, msgs, err
	}
	_, counter, err := s.counters.Resolve(policies.ModelSpec{Name: req.GetModel()})
	var unknown *policies.UnknownModelError
	if errors.As(err, &unknown) {
		// The resolver names the state's field; here the model is a request field.
		err = &policies.UnknownModelError{Field: "model", Model: unknown.Model}
	}
	return counter, msgs, err
}

// counterProvenance is how a counter's bare-text counts are obtained; the
// TokenCounter interface reports it only with message counts.
func counterProvenance(c policies.TokenCounter) policies.Provenance {
	_, p := c.CountMessage(&policies.Message{Role: policies.RoleUser, Parts: []policies.Part{policies.TextPart("")}})
	return p
}
