package server

import (
	"context"
	"errors"
	"log/slog"
	"strconv"

	"google.golang.org/grpc/codes"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/pipeline"
)

// Compiler runs profiles; *pipeline.Catalog is the production one.
type Compiler interface {
	Run(ctx context.Context, req pipeline.Request) (*pipeline.Result, error)
	Compact(ctx context.Context, req pipeline.Request) (*pipeline.CompactResult, error)
	Profiles() []pipeline.ProfileInfo
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
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Service{compiler: cfg.Compiler, counters: cfg.Counters, limits: cfg.Limits, log: cfg.Logger}, nil
}

// Compile runs the whole profile and returns what the model should see.
func (s *Service) Compile(ctx context.Context, req *ctxcv1.CompileRequest) (*ctxcv1.CompileResponse, error) {
	preq, err := s.pipelineRequest(req.GetState(), req.GetStateBlob(), req.GetModel(), req.GetProfile(), req.GetOptions(), pipeline.SegmentCompile)
	if err != nil {
		return nil, toStatus(ctx, s.log, "Compile", err)
	}
	res, err := s.compiler.Run(ctx, preq)
	if err != nil {
		return nil, toStatus(ctx, s.log, "Compile", err)
	}
	return &ctxcv1.CompileResponse{
		Messages: messagesToProto(res.Messages()),
		Budget:   budgetToProto(res.Work.Budget),
		Report:   reportToProto(&res.Report),
	}, nil
}

// Budget runs the profile up to its budget stage.
func (s *Service) Budget(ctx context.Context, req *ctxcv1.BudgetRequest) (*ctxcv1.BudgetResponse, error) {
	preq, err := s.pipelineRequest(req.GetState(), nil, nil, req.GetProfile(), req.GetOptions(), pipeline.SegmentBudget)
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
	preq, err := s.pipelineRequest(req.GetState(), nil, nil, req.GetProfile(), req.GetOptions(), pipeline.SegmentCompact)
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

// Route is built by a later issue.
func (s *Service) Route(ctx context.Context, _ *ctxcv1.RouteRequest) (*ctxcv1.RouteResponse, error) {
	return nil, newStatus(codes.Unimplemented, "Route is not implemented yet by this server; use Compile with the state your client keeps", reasonNotImplemented, nil)
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
// A request-level model replaces the state's model.
func (s *Service) pipelineRequest(state *ctxcv1.AgentState, blob []byte, model *ctxcv1.ModelSpec, profile string, opts *ctxcv1.CompileOptions, seg pipeline.Segment) (pipeline.Request, error) {
	d := decoder{limits: s.limits}
	if model != nil && state != nil {
		state = withModel(state, model)
	}
	st, err := d.state("state", state, blob)
	if err != nil {
		return pipeline.Request{}, err
	}
	options := d.options("options", opts)
	if err := d.err(); err != nil {
		return pipeline.Request{}, err
	}
	return pipeline.Request{Profile: profile, State: st, Options: options, Segment: seg}, nil
}

// withModel returns a shallow copy of state whose model is model; the
// request is not modified.
func withModel(state *ctxcv1.AgentState, model *ctxcv1.ModelSpec) *ctxcv1.AgentState {
	c := &ctxcv1.AgentState{
		SchemaVersion: state.GetSchemaVersion(),
		AgentId:       state.GetAgentId(),
		Context:       state.GetContext(),
		Model:         model,
		Execution:     state.GetExecution(),
	}
	return c
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
