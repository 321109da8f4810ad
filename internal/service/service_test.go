package service

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contextcompiler/ctxc/internal/adapter/adaptertest"

	"github.com/contextcompiler/ctxc/internal/adapter"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/testing/protocmp"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/compiler"
	"github.com/contextcompiler/ctxc/internal/compiler/compilertest"
	"github.com/contextcompiler/ctxc/internal/pipeline"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

type harness struct {
	conn      *grpc.ClientConn
	client    ctxcv1.ContextCompilerServiceClient
	health    healthpb.HealthClient
	transport *Transport
	catalog   *compilertest.Catalog
	logs      *lockedBuffer
	stop      context.CancelFunc
	served    chan error
	listener  *bufconn.Listener // the server's: tests may dial it as raw clients
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// start serves a adapter.Service over an in-memory listener.
func start(t *testing.T, cfg TransportConfig) *harness {
	t.Helper()
	h := &harness{catalog: compilertest.NewCatalog(), logs: &lockedBuffer{}, served: make(chan error, 1)}
	log := slog.New(slog.NewTextHandler(h.logs, nil))
	app, err := compiler.New(compiler.Config{Catalog: h.catalog, Counters: compilertest.Counters{}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := adapter.New(adapter.Config{Compiler: app, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = log
	h.transport = NewTransport(svc, cfg)
	lis := bufconn.Listen(1 << 20)
	h.listener = lis
	ctx, stop := context.WithCancel(context.Background())
	h.stop = stop
	go func() { h.served <- h.transport.Serve(ctx, lis) }()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		h.transport.StopBy(time.Now()) // no drain delay to wait out
		stop()
		<-h.served
	})
	h.conn = conn
	h.client = ctxcv1.NewContextCompilerServiceClient(conn)
	h.health = healthpb.NewHealthClient(conn)
	h.transport.SetServing()
	return h
}

func requestState() *ctxcv1.AgentState {
	s := adaptertest.ValidState()
	s.Context.SystemPrompt = "Be brief."
	return s
}

func TestCompileConvertsBothWays(t *testing.T) {
	h := start(t, TransportConfig{})
	ratio := 0.5
	resp, err := h.client.Compile(context.Background(), &ctxcv1.CompileRequest{
		State:   requestState(),
		Options: &ctxcv1.CompileOptions{View: ctxcv1.View_VIEW_REASONING, SoftThresholdRatio: &ratio},
	})
	if err != nil {
		t.Fatal(err)
	}
	wantMessages := append([]*ctxcv1.Message{{Id: compiler.SystemMessageID, Role: ctxcv1.Role_ROLE_SYSTEM,
		Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: "Be brief."}}}}}, requestState().Context.Messages...)
	if diff := cmp.Diff(wantMessages, resp.GetMessages(), protocmp.Transform()); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	wantBudget := &ctxcv1.TokenBudget{ContextWindowTokenCount: 128000, UsedTokenCount: 9, ReservedOutputTokenCount: 4096,
		RemainingTokenCount: 128000 - 4096 - 9, Provenance: ctxcv1.TokenCountProvenance_TOKEN_COUNT_PROVENANCE_EXACT, Counter: "o200k_base",
		Breakdown: &ctxcv1.TokenBreakdown{ConversationTokenCount: 9}}
	if diff := cmp.Diff(wantBudget, resp.GetBudget(), protocmp.Transform()); diff != "" {
		t.Errorf("budget (-want +got):\n%s", diff)
	}
	if got := resp.GetReport(); got.GetProfile() != "pragmatic" || len(got.GetMessages()) != 3 || got.GetFirstChangedIndex() != 1 || got.GetStages()[0].GetPolicy() != "normalize" {
		t.Errorf("report not converted: %v", got)
	}
	reqs := h.catalog.Requests()
	if len(reqs) != 1 {
		t.Fatalf("compiler ran %d times", len(reqs))
	}
	wantOpts := agentstate.Options{View: agentstate.ViewReasoning, SoftThresholdRatio: &ratio}
	if diff := cmp.Diff(wantOpts, reqs[0].Options); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	if reqs[0].Segment != pipeline.SegmentCompile || reqs[0].Profile != "" {
		t.Errorf("segment %v profile %q, want compile and the default", reqs[0].Segment, reqs[0].Profile)
	}
}

func TestCompileRequestModelReplacesStateModel(t *testing.T) {
	h := start(t, TransportConfig{})
	window := uint32(8000)
	state := requestState()
	state.Model = nil // the request-level model is enough
	_, err := h.client.Compile(context.Background(), &ctxcv1.CompileRequest{State: state,
		Model: &ctxcv1.ModelSpec{Name: "gpt-4o", Provider: "openai", ContextWindowTokenCount: &window}})
	if err != nil {
		t.Fatal(err)
	}
	got := h.catalog.Requests()[0].State.Model
	if diff := cmp.Diff(agentstate.ModelSpec{Name: "gpt-4o", Provider: "openai", ContextWindowTokens: &window}, got); diff != "" {
		t.Errorf("model (-want +got):\n%s", diff)
	}
}

func TestBudgetReturnsPerMessageCounts(t *testing.T) {
	h := start(t, TransportConfig{})
	resp, err := h.client.Budget(context.Background(), &ctxcv1.BudgetRequest{State: requestState(), Profile: "custom"})
	if err != nil {
		t.Fatal(err)
	}
	if req := h.catalog.Requests()[0]; req.Segment != pipeline.SegmentBudget || req.Profile != "custom" {
		t.Errorf("segment %v profile %q", req.Segment, req.Profile)
	}
	want := []*ctxcv1.MessageReport{
		{MessageId: "u1", Disposition: ctxcv1.Disposition_DISPOSITION_KEPT, TokenCount: 3, Provenance: ctxcv1.TokenCountProvenance_TOKEN_COUNT_PROVENANCE_EXACT},
		{MessageId: "a1", Disposition: ctxcv1.Disposition_DISPOSITION_KEPT, TokenCount: 3, Provenance: ctxcv1.TokenCountProvenance_TOKEN_COUNT_PROVENANCE_EXACT},
		{MessageId: "t1", Disposition: ctxcv1.Disposition_DISPOSITION_KEPT, TokenCount: 3, Provenance: ctxcv1.TokenCountProvenance_TOKEN_COUNT_PROVENANCE_EXACT},
	}
	if diff := cmp.Diff(want, resp.GetMessages(), protocmp.Transform()); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if resp.GetBudget().GetUsedTokenCount() != 9 {
		t.Errorf("budget %v", resp.GetBudget())
	}
}

func TestCompactReturnsTheNewState(t *testing.T) {
	h := start(t, TransportConfig{})
	resp, err := h.client.Compact(context.Background(), &ctxcv1.CompactRequest{State: requestState()})
	if err != nil {
		t.Fatal(err)
	}
	want := requestState()
	want.SchemaVersion = 1         // the lifecycle check reads 0 as the current version and says so
	want.Model.Provider = "openai" // and locks the state to its model's provider
	want.Context.Messages = append(want.Context.Messages, &ctxcv1.Message{Id: "ctxc-summary-1", Role: ctxcv1.Role_ROLE_USER,
		Kind: ctxcv1.MessageKind_MESSAGE_KIND_SUMMARY, CoversMessageIds: []string{"u1"}, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: "summary"}}}})
	if diff := cmp.Diff(want, resp.GetState(), protocmp.Transform()); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
	if resp.GetBudgetBefore() == nil || resp.GetBudgetAfter() == nil || resp.GetReport() == nil {
		t.Errorf("budgets and report missing: %v", resp)
	}
}

func TestCountTokens(t *testing.T) {
	h := start(t, TransportConfig{})
	exact := ctxcv1.TokenCountProvenance_TOKEN_COUNT_PROVENANCE_EXACT
	msg := &ctxcv1.Message{Id: "x", Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: "12345678"}}}}
	tests := []struct {
		name string
		req  *ctxcv1.CountTokensRequest
		want *ctxcv1.CountTokensResponse
	}{
		{"by model", &ctxcv1.CountTokensRequest{Counter: &ctxcv1.CountTokensRequest_Model{Model: "gpt-4o"}, Texts: []string{"abcd", "abcdefgh"}, Messages: []*ctxcv1.Message{msg}},
			&ctxcv1.CountTokensResponse{Texts: []*ctxcv1.TokenCount{{TokenCount: 1, Provenance: exact}, {TokenCount: 2, Provenance: exact}},
				Messages: []*ctxcv1.TokenCount{{TokenCount: 5, Provenance: exact}}, TotalTokenCount: 8, Counter: "o200k_base", Provenance: exact}},
		{"by encoding", &ctxcv1.CountTokensRequest{Counter: &ctxcv1.CountTokensRequest_Encoding{Encoding: "cl100k_base"}, Texts: []string{"abcdefgh"}},
			&ctxcv1.CountTokensResponse{Texts: []*ctxcv1.TokenCount{{TokenCount: 2, Provenance: exact}}, TotalTokenCount: 2, Counter: "cl100k_base", Provenance: exact}},
		{"nothing to count", &ctxcv1.CountTokensRequest{Counter: &ctxcv1.CountTokensRequest_Encoding{Encoding: "cl100k_base"}},
			&ctxcv1.CountTokensResponse{Counter: "cl100k_base"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := h.client.CountTokens(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestListProfiles(t *testing.T) {
	h := start(t, TransportConfig{})
	got, err := h.client.ListProfiles(context.Background(), &ctxcv1.ListProfilesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := &ctxcv1.ListProfilesResponse{Profiles: []*ctxcv1.Profile{
		{Name: "custom", Description: "Mine.", Source: "examples/profiles.yaml", Stages: []*ctxcv1.ProfileStage{{Stage: "normalize", Policy: "normalize", SettingsJson: "{}"}}},
		{Name: "pragmatic", Description: "Default.", Default: true, Source: "builtin", Stages: []*ctxcv1.ProfileStage{
			{Stage: "normalize", Policy: "normalize", SettingsJson: "{}"},
			{Stage: "estimate", Policy: "estimate", SettingsJson: `{"cache":true}`},
		}},
	}}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// wantStatus checks a call's code, ErrorInfo reason and BadRequest field paths.
func wantStatus(t *testing.T, err error, code codes.Code, reason string, fields ...string) *errdetails.ErrorInfo {
	t.Helper()
	gotCode, info, details := adaptertest.StatusDetails(t, err)
	if gotCode != code || info.GetReason() != reason || info.GetDomain() != adapter.ErrorDomain {
		t.Fatalf("got %v %s/%s (%v), want %v %s", gotCode, info.GetDomain(), info.GetReason(), status.Convert(err).Message(), code, reason)
	}
	var gotFields []string
	for _, d := range details {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				gotFields = append(gotFields, v.GetField())
			}
		}
	}
	if diff := cmp.Diff(fields, gotFields); diff != "" {
		t.Errorf("field violations (-want +got):\n%s", diff)
	}
	return info
}

func TestErrorsOverTheWire(t *testing.T) {
	h := start(t, TransportConfig{})
	ctx := context.Background()
	noContent := requestState()
	noContent.Context.Messages[0].Parts[0] = &ctxcv1.Part{}
	tests := []struct {
		name   string
		call   func() error
		code   codes.Code
		reason string
		fields []string
	}{
		{"compile without state", func() error { _, err := h.client.Compile(ctx, &ctxcv1.CompileRequest{}); return err },
			codes.InvalidArgument, "INVALID_STATE", []string{"state"}},
		{"budget without state", func() error { _, err := h.client.Budget(ctx, &ctxcv1.BudgetRequest{}); return err },
			codes.InvalidArgument, "INVALID_STATE", []string{"state"}},
		{"compact without state", func() error { _, err := h.client.Compact(ctx, &ctxcv1.CompactRequest{}); return err },
			codes.InvalidArgument, "INVALID_STATE", []string{"state"}},
		{"state blob", func() error {
			_, err := h.client.Compile(ctx, &ctxcv1.CompileRequest{StateBlob: []byte("x")})
			return err
		},
			codes.InvalidArgument, "STATE_BLOB_FOREIGN", []string{"state_blob"}},
		{"part without content and bad option", func() error {
			ratio := 2.0
			_, err := h.client.Compile(ctx, &ctxcv1.CompileRequest{State: noContent, Options: &ctxcv1.CompileOptions{SoftThresholdRatio: &ratio}})
			return err
		}, codes.InvalidArgument, "INVALID_STATE", []string{"state.context.messages[0].parts[0]", "options.soft_threshold_ratio"}},
		{"unknown profile", func() error {
			_, err := h.client.Compile(ctx, &ctxcv1.CompileRequest{State: requestState(), Profile: "nope"})
			return err
		}, codes.InvalidArgument, "UNKNOWN_PROFILE", []string{"profile"}},
		{"unsupported schema version", func() error {
			s := requestState()
			s.SchemaVersion = 3
			_, err := h.client.Compile(ctx, &ctxcv1.CompileRequest{State: s})
			return err
		}, codes.FailedPrecondition, "STATE_VERSION_UNSUPPORTED", nil},
		{"count without counter", func() error {
			_, err := h.client.CountTokens(ctx, &ctxcv1.CountTokensRequest{Texts: []string{"a"}})
			return err
		},
			codes.InvalidArgument, "INVALID_ARGUMENT", []string{"counter"}},
		{"count with an invalid message", func() error {
			_, err := h.client.CountTokens(ctx, &ctxcv1.CountTokensRequest{Counter: &ctxcv1.CountTokensRequest_Model{Model: "gpt-4o"},
				Messages: []*ctxcv1.Message{{Id: "x", Role: 9, Parts: []*ctxcv1.Part{{}}}}})
			return err
		}, codes.InvalidArgument, "INVALID_ARGUMENT", []string{"messages[0].role", "messages[0].parts[0]"}},
		{"count for an unknown model", func() error {
			_, err := h.client.CountTokens(ctx, &ctxcv1.CountTokensRequest{Counter: &ctxcv1.CountTokensRequest_Model{Model: "mystery"}})
			return err
		}, codes.InvalidArgument, "UNKNOWN_MODEL", []string{"model"}},
		{"count for an unknown encoding", func() error {
			_, err := h.client.CountTokens(ctx, &ctxcv1.CountTokensRequest{Counter: &ctxcv1.CountTokensRequest_Encoding{Encoding: "x"}})
			return err
		}, codes.InvalidArgument, "UNKNOWN_ENCODING", []string{"encoding"}},
		{"route without input", func() error {
			_, err := h.client.Route(ctx, &ctxcv1.RouteRequest{State: requestState()})
			return err
		}, codes.InvalidArgument, "INVALID_ROUTE_INPUT", []string{"input"}},
		{"route with state and blob", func() error {
			_, err := h.client.Route(ctx, &ctxcv1.RouteRequest{State: requestState(), StateBlob: []byte("CTXC")})
			return err
		}, codes.InvalidArgument, "INVALID_STATE", []string{"state_blob"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantStatus(t, tt.call(), tt.code, tt.reason, tt.fields...)
		})
	}
	info := wantStatus(t, tests[5].call(), codes.InvalidArgument, "UNKNOWN_PROFILE", "profile")
	if got := info.GetMetadata()["known_profiles"]; got != "custom,pragmatic" {
		t.Errorf("known_profiles = %q", got)
	}
}

func TestPanicIsRecoveredAsInternal(t *testing.T) {
	h := start(t, TransportConfig{})
	_, err := h.client.Compile(context.Background(), &ctxcv1.CompileRequest{State: requestState(), Profile: "panic"})
	wantStatus(t, err, codes.Internal, "INTERNAL")
	if msg := status.Convert(err).Message(); strings.Contains(msg, "secret") {
		t.Errorf("panic detail leaked: %q", msg)
	}
	if !strings.Contains(h.logs.String(), "policy bug with secret detail") {
		t.Errorf("panic not logged:\n%s", h.logs.String())
	}
	if _, err := h.client.Compile(context.Background(), &ctxcv1.CompileRequest{State: requestState()}); err != nil {
		t.Errorf("server broken after a panic: %v", err)
	}
}

func TestOversizedRequestIsRefused(t *testing.T) {
	h := start(t, TransportConfig{MaxMessageBytes: 64 << 10})
	big := requestState()
	big.Context.SystemPrompt = strings.Repeat("x", 100<<10)
	_, err := h.client.Compile(context.Background(), &ctxcv1.CompileRequest{State: big})
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("got %v, want RESOURCE_EXHAUSTED", err)
	}
	if len(h.catalog.Requests()) != 0 {
		t.Error("an oversized request reached the compiler")
	}
	if _, err := h.client.Compile(context.Background(), &ctxcv1.CompileRequest{State: requestState()}); err != nil {
		t.Errorf("server broken after an oversized request: %v", err)
	}
}

func healthStatus(t *testing.T, tr *Transport, service string) healthpb.HealthCheckResponse_ServingStatus {
	t.Helper()
	resp, err := tr.health.Check(context.Background(), &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetStatus()
}

func TestHealthFollowsTheLifecycle(t *testing.T) {
	tr := NewTransport(&adapter.Service{}, TransportConfig{})
	for _, svc := range healthServices {
		if got := healthStatus(t, tr, svc); got != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Errorf("%q before SetServing: %v", svc, got)
		}
	}
	tr.SetServing()
	for _, svc := range healthServices {
		if got := healthStatus(t, tr, svc); got != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("%q after SetServing: %v", svc, got)
		}
	}
}

func TestShutdownLetsInFlightCallsFinish(t *testing.T) {
	h := start(t, TransportConfig{})
	resp, err := h.health.Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health %v %v", resp, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := h.client.Compile(context.Background(), &ctxcv1.CompileRequest{State: requestState(), Profile: "block"})
		done <- err
	}()
	<-h.catalog.Started
	h.stop()
	// Shutdown turns health NOT_SERVING before it waits for calls.
	for healthStatus(t, h.transport, "") != healthpb.HealthCheckResponse_NOT_SERVING {
		runtime.Gosched()
	}
	close(h.catalog.Release)
	if err := <-done; err != nil {
		t.Errorf("in-flight call failed: %v", err)
	}
	if err := <-h.served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	h.served <- nil // for Cleanup
}

func TestShutdownCutsOffCallsAfterTheGracePeriod(t *testing.T) {
	h := start(t, TransportConfig{GracePeriod: 1}) // 1ns: the call cannot finish in time
	done := make(chan error, 1)
	go func() {
		_, err := h.client.Compile(context.Background(), &ctxcv1.CompileRequest{State: requestState(), Profile: "block"})
		done <- err
	}()
	<-h.catalog.Started
	h.stop()
	if err := <-h.served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	h.served <- nil
	if err := <-done; err == nil {
		t.Error("a call still running after the grace period succeeded")
	}
}

// StopBy shortens the grace period to what is left before a deadline the
// caller already spent part of (an HTTP gateway drained first).
func TestShutdownEndsByTheStopByDeadline(t *testing.T) {
	h := start(t, TransportConfig{GracePeriod: time.Hour})
	done := make(chan error, 1)
	go func() {
		_, err := h.client.Compile(context.Background(), &ctxcv1.CompileRequest{State: requestState(), Profile: "block"})
		done <- err
	}()
	<-h.catalog.Started
	h.transport.StopBy(time.Now()) // nothing is left of the grace period
	h.stop()
	if err := <-h.served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	h.served <- nil
	if err := <-done; err == nil {
		t.Error("a call still running at the deadline succeeded: the hour-long grace period was used")
	}
	if !strings.Contains(h.logs.String(), "grace_period=0s") {
		t.Errorf("shutdown did not log the shortened grace period:\n%s", h.logs.String())
	}
}

func TestCallsAreLoggedExceptHealthProbes(t *testing.T) {
	h := start(t, TransportConfig{})
	if _, err := h.health.Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.client.ListProfiles(context.Background(), &ctxcv1.ListProfilesRequest{}); err != nil {
		t.Fatal(err)
	}
	logs := h.logs.String()
	if !strings.Contains(logs, "grpc.method=ListProfiles") {
		t.Errorf("ListProfiles not logged:\n%s", logs)
	}
	if strings.Contains(logs, "grpc.health.v1.Health") {
		t.Errorf("health probe logged:\n%s", logs)
	}
}
