package adapter

import (
	"context"
	"errors"
	"log/slog"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/adapter/stateref"
	"github.com/contextcompiler/ctxc/internal/compiler"
)

// Compiler is the application layer the handlers call; *compiler.Service is
// the production one.
type Compiler interface {
	Compile(ctx context.Context, req compiler.CompileRequest) (*compiler.CompileResult, error)
	Budget(ctx context.Context, req compiler.Request) (*compiler.BudgetResult, error)
	Compact(ctx context.Context, req compiler.Request) (*compiler.CompactResult, error)
	Route(ctx context.Context, req compiler.RouteRequest) (*compiler.RouteResult, error)
	CountTokens(ctx context.Context, req compiler.CountRequest) (*compiler.CountResult, error)
	Profiles() []compiler.ProfileInfo
	// Limits bound what the handlers decode.
	Limits() compiler.Limits
}

// Config holds the service's dependencies.
type Config struct {
	Compiler Compiler
	// Logger receives internal errors with their detail; slog.Default() when nil.
	Logger *slog.Logger
	// StateRefs keeps the states calls may name by reference; nil keeps
	// none (responses carry no state_ref, and base_state_ref never resolves).
	StateRefs *stateref.Store
}

// Service implements ctxcv1.ContextCompilerServiceServer. Each handler
// decodes the request into the application layer's types (validating it in
// the same pass), calls one use case and encodes the result; every error
// goes through ToStatus.
type Service struct {
	ctxcv1.UnimplementedContextCompilerServiceServer
	app  Compiler
	log  *slog.Logger
	refs *stateref.Store
}

var _ ctxcv1.ContextCompilerServiceServer = (*Service)(nil)

// New builds the service.
func New(cfg Config) (*Service, error) {
	if cfg.Compiler == nil {
		return nil, errors.New("server: Config.Compiler is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Service{app: cfg.Compiler, log: cfg.Logger, refs: cfg.StateRefs}, nil
}

// Compile runs the whole profile and returns what the model should see.
func (s *Service) Compile(ctx context.Context, req *ctxcv1.CompileRequest) (*ctxcv1.CompileResponse, error) {
	d := s.decoder(ctx)
	in, err := d.compileRequest(ctx, req)
	if err != nil {
		return nil, ToStatus(ctx, s.log, "Compile", err)
	}
	res, err := s.app.Compile(ctx, in)
	if err != nil {
		return nil, ToStatus(ctx, s.log, "Compile", err)
	}
	resp := compileResponse(req, res)
	if req.GetInputJson() == "" { // else the conversation was not the state's: nothing to name
		resp.StateRef = s.keepGiven(ctx, d)
	}
	return resp, nil
}

// Budget runs the profile up to its budget stage.
func (s *Service) Budget(ctx context.Context, req *ctxcv1.BudgetRequest) (*ctxcv1.BudgetResponse, error) {
	d := s.decoder(ctx)
	in, err := d.request(ctx, refParts{ref: req.GetBaseStateRef(), state: req.GetState(), appended: req.GetAppendedMessages()}, req.GetProfile(), req.GetOptions())
	if err != nil {
		return nil, ToStatus(ctx, s.log, "Budget", err)
	}
	res, err := s.app.Budget(ctx, in)
	if err != nil {
		return nil, ToStatus(ctx, s.log, "Budget", err)
	}
	report := reportToProto(res.Report)
	return &ctxcv1.BudgetResponse{Budget: budgetToProto(res.Budget), Messages: report.GetMessages(), Report: report, StateRef: s.keepGiven(ctx, d)}, nil
}

// Compact runs the profile's compaction and returns the state with it persisted.
func (s *Service) Compact(ctx context.Context, req *ctxcv1.CompactRequest) (*ctxcv1.CompactResponse, error) {
	in, err := s.decoder(ctx).request(ctx, refParts{ref: req.GetBaseStateRef(), state: req.GetState(), appended: req.GetAppendedMessages()}, req.GetProfile(), req.GetOptions())
	if err != nil {
		return nil, ToStatus(ctx, s.log, "Compact", err)
	}
	res, err := s.app.Compact(ctx, in)
	if err != nil {
		return nil, ToStatus(ctx, s.log, "Compact", err)
	}
	state := StateToProto(res.State)
	return &ctxcv1.CompactResponse{State: state, BudgetBefore: budgetToProto(res.Before),
		BudgetAfter: budgetToProto(res.After), Report: reportToProto(res.Report), StateRef: s.keepReturned(ctx, state)}, nil
}

// Route appends a user turn, a step's output or an event to the log, and
// answers with the new state in the form the request used (or asked for).
func (s *Service) Route(ctx context.Context, req *ctxcv1.RouteRequest) (*ctxcv1.RouteResponse, error) {
	in, err := s.decoder(ctx).routeRequest(ctx, req)
	if err != nil {
		return nil, ToStatus(ctx, s.log, "Route", err)
	}
	res, err := s.app.Route(ctx, in)
	if err != nil {
		return nil, ToStatus(ctx, s.log, "Route", err)
	}
	resp, state, err := routeResponse(res, in.Source.FromBlob || req.GetWantStateBlob())
	if err != nil {
		return nil, ToStatus(ctx, s.log, "Route", err)
	}
	resp.StateRef = s.keepReturned(ctx, state)
	return resp, nil
}

// CountTokens counts each text and message with the model's or encoding's counter.
func (s *Service) CountTokens(ctx context.Context, req *ctxcv1.CountTokensRequest) (*ctxcv1.CountTokensResponse, error) {
	in, err := s.decoder(ctx).countRequest(req)
	if err != nil {
		return nil, ToStatus(ctx, s.log, "CountTokens", err)
	}
	res, err := s.app.CountTokens(ctx, in)
	if err != nil {
		return nil, ToStatus(ctx, s.log, "CountTokens", err)
	}
	return countResponse(res), nil
}

// ListProfiles describes every profile the server knows.
func (s *Service) ListProfiles(ctx context.Context, _ *ctxcv1.ListProfilesRequest) (*ctxcv1.ListProfilesResponse, error) {
	profiles := s.app.Profiles()
	resp := &ctxcv1.ListProfilesResponse{Profiles: make([]*ctxcv1.Profile, len(profiles))}
	for i := range profiles {
		resp.Profiles[i] = profileToProto(&profiles[i])
	}
	return resp, nil
}

// decoder starts the decoding of one request.
func (s *Service) decoder(ctx context.Context) *decoder {
	ref, size := wholeRefFromWire(ctx)
	d := &decoder{limits: s.app.Limits(), refs: s.refs, log: s.log, givenRef: ref, givenSize: size}
	if b, ok := ctx.Value(inflightKey{}).(InflightBytes); ok {
		d.reserve = func(field string, n int64) error { return heldFor(field, b.Hold(ctx, n)) }
		d.grow = func(field string, n int64) error { return heldFor(field, b.Grow(ctx, n)) }
		d.inflightLimit = b.Limit()
	}
	return d
}
