//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// loadCeiling is the peak RSS the bounded load test allows the server
// (measured: about 100 MiB after 10s and after 60s).
const loadCeiling = 256 << 20

// TestBoundedLoad runs 50 clients against the server with a mix of calls
// (small and large Compiles, Budget, CountTokens, Route) for
// CTXC_LOAD_DURATION (10s in `make test`; `make bench` soaks for 60s), and
// asserts that no call fails and the server's memory stays under
// loadCeiling.
func TestBoundedLoad(t *testing.T) {
	t.Parallel()
	duration := 10 * time.Second
	if v := os.Getenv("CTXC_LOAD_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("CTXC_LOAD_DURATION: %v", err)
		}
		duration = d
	}
	if testing.Short() {
		duration = 2 * time.Second
	}
	s := startServer(t)
	chat, coding := readExample(t, "chat.json"), readExample(t, "coding-agent.json")
	window := uint32(16000)
	calls := []func(ctx context.Context, c ctxcv1.ContextCompilerServiceClient, n int) error{
		func(ctx context.Context, c ctxcv1.ContextCompilerServiceClient, n int) error {
			req := proto.CloneOf(chat)
			req.State.Context.Messages[0].Parts[0].Content = &ctxcv1.Part_Text{Text: fmt.Sprintf("question %d", n)}
			_, err := c.Compile(ctx, req)
			return err
		},
		func(ctx context.Context, c ctxcv1.ContextCompilerServiceClient, n int) error {
			req := proto.CloneOf(coding)
			req.Options = &ctxcv1.CompileOptions{MaxContextTokenCount: &window}
			req.State.Context.Messages[13].Parts[0].GetToolResult().Content += fmt.Sprintf("\n// run %d", n)
			_, err := c.Compile(ctx, req)
			return err
		},
		func(ctx context.Context, c ctxcv1.ContextCompilerServiceClient, n int) error {
			_, err := c.Budget(ctx, &ctxcv1.BudgetRequest{State: coding.GetState()})
			return err
		},
		func(ctx context.Context, c ctxcv1.ContextCompilerServiceClient, n int) error {
			_, err := c.CountTokens(ctx, &ctxcv1.CountTokensRequest{Counter: &ctxcv1.CountTokensRequest_Model{Model: "gpt-4o"},
				Texts: []string{fmt.Sprintf("text %d: %s", n, coding.GetState().GetContext().GetMessages()[5].GetParts()[0].GetToolResult().GetContent())}})
			return err
		},
		func(ctx context.Context, c ctxcv1.ContextCompilerServiceClient, n int) error {
			_, err := c.Route(ctx, &ctxcv1.RouteRequest{State: chat.GetState(),
				Input: &ctxcv1.RouteRequest_UserTurn{UserTurn: &ctxcv1.UserTurn{Messages: []*ctxcv1.Message{
					{Id: fmt.Sprintf("load-%d", n), Role: ctxcv1.Role_ROLE_USER, Parts: []*ctxcv1.Part{text(fmt.Sprintf("and then %d?", n))}}}}}})
			return err
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	var (
		done     atomic.Int64
		mu       sync.Mutex
		failures []error
		wg       sync.WaitGroup
	)
	const clients = 50
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := w; ctx.Err() == nil; n += clients {
				callCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
				err := calls[n%len(calls)](callCtx, s.client(), n)
				cancel()
				if err != nil {
					mu.Lock()
					if len(failures) < 10 {
						failures = append(failures, err)
					}
					mu.Unlock()
					continue
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	for _, err := range failures {
		t.Errorf("a call failed under load: %v", err)
	}
	peak := peakRSS(t, s.cmd.Process.Pid)
	t.Logf("%d calls in %s at concurrency %d (%.0f/s); peak RSS %d MiB (ceiling %d MiB)", done.Load(), duration, clients,
		float64(done.Load())/duration.Seconds(), peak>>20, loadCeiling>>20)
	if done.Load() == 0 {
		t.Error("no call completed")
	}
	if peak > loadCeiling {
		t.Errorf("peak RSS %d MiB over the ceiling of %d MiB", peak>>20, loadCeiling>>20)
	}
}
