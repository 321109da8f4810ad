package adapter

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/adapter/adaptertest"
	"github.com/contextcompiler/ctxc/internal/compiler"
)

// errRecorded is what scopeRecorder answers every call with.
var errRecorded = errors.New("recorded")

// scopeRecorder is an application layer that records the scope of each
// call and answers nothing more.
type scopeRecorder struct {
	Compiler
	scopes []string
}

func (r *scopeRecorder) Limits() compiler.Limits { return compiler.DefaultLimits() }

func (r *scopeRecorder) Compile(_ context.Context, req compiler.CompileRequest) (*compiler.CompileResult, error) {
	r.scopes = append(r.scopes, req.Scope)
	return nil, errRecorded
}

func (r *scopeRecorder) Budget(_ context.Context, req compiler.Request) (*compiler.BudgetResult, error) {
	r.scopes = append(r.scopes, req.Scope)
	return nil, errRecorded
}

func (r *scopeRecorder) Route(_ context.Context, req compiler.RouteRequest) (*compiler.RouteResult, error) {
	r.scopes = append(r.scopes, req.Scope)
	return nil, errRecorded
}

// TestCallsAreScopedToTheirCaller: the application layer is told whose
// call it runs, so that work one caller's calls left for reuse (the
// schedule cache) is never reused for another's.
func TestCallsAreScopedToTheirCaller(t *testing.T) {
	app := &scopeRecorder{}
	svc, err := New(Config{Compiler: app, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for _, caller := range []string{"alice", ""} {
		ctx := t.Context()
		if caller != "" {
			ctx = WithCaller(ctx, caller)
		}
		_, _ = svc.Compile(ctx, &ctxcv1.CompileRequest{State: adaptertest.ValidState()})
		_, _ = svc.Budget(ctx, &ctxcv1.BudgetRequest{State: adaptertest.ValidState()})
		_, _ = svc.Route(ctx, &ctxcv1.RouteRequest{State: adaptertest.ValidState(), Input: &ctxcv1.RouteRequest_UserTurn{UserTurn: &ctxcv1.UserTurn{ExecutionId: "e2", Messages: []*ctxcv1.Message{{Id: "u2", Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{{Content: &ctxcv1.Part_Text{Text: "next"}}}}}}}})
	}
	if diff := cmp.Diff([]string{"alice", "alice", "alice", "", "", ""}, app.scopes); diff != "" {
		t.Errorf("scopes the application layer was given (-want +got):\n%s", diff)
	}
}
