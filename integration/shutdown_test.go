//go:build integration

package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// TestSIGTERMDrainsBeforeThePortCloses sends SIGTERM under load: health turns
// NOT_SERVING while the port still accepts new connections and serves them
// for the drain delay; then new calls are refused (UNAVAILABLE), no call that
// reached the server fails, and the process exits 0.
func TestSIGTERMDrainsBeforeThePortCloses(t *testing.T) {
	t.Parallel() // it waits out the drain delay, as the other waiting tests do
	s := startServer(t, "--drain-delay", "3s", "--grace-period", "20s")
	base := readExample(t, "chat.json")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var (
		signalled            atomic.Bool
		okAfter, unavailable atomic.Int64
		mu                   sync.Mutex
		failures             []error
		wg                   sync.WaitGroup
	)
	const workers = 8
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5000 && ctx.Err() == nil; i++ {
				req := proto.CloneOf(base)
				req.State.Context.Messages[0].Parts[0].Content = &ctxcv1.Part_Text{Text: fmt.Sprintf("worker %d call %d: %s", w, i, strings.Repeat("lorem ipsum ", 200))}
				_, err := s.client().Compile(ctx, req)
				switch {
				case err == nil && signalled.Load():
					okAfter.Add(1)
				case err == nil:
				case status.Code(err) == codes.Unavailable && signalled.Load():
					unavailable.Add(1)
					return
				default:
					mu.Lock()
					failures = append(failures, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	time.Sleep(500 * time.Millisecond) // load builds up

	health := healthpb.NewHealthClient(s.conn)
	signalled.Store(true)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Health says NOT_SERVING first...
	for {
		resp, err := health.Check(ctx, &healthpb.HealthCheckRequest{})
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_NOT_SERVING {
			break
		}
		if err != nil {
			t.Fatalf("health failed before it said NOT_SERVING: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// ...while a new connection is still accepted and served.
	fresh, err := grpc.NewClient("passthrough:///"+s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if _, err := ctxcv1.NewContextCompilerServiceClient(fresh).Compile(ctx, proto.CloneOf(base)); err != nil {
		t.Errorf("a new connection after NOT_SERVING, during the drain delay: %v", err)
	}
	select {
	case <-s.exited:
	case <-time.After(45 * time.Second):
		t.Fatalf("no exit after SIGTERM\n%s", s.logs)
	}
	wg.Wait()
	for _, err := range failures {
		t.Errorf("a call failed with something other than UNAVAILABLE: %v", err)
	}
	if s.exitErr != nil {
		t.Errorf("exit: %v\n%s", s.exitErr, s.logs)
	}
	t.Logf("served after SIGTERM: %d; refused at the end: %d", okAfter.Load(), unavailable.Load())
	if okAfter.Load() == 0 || unavailable.Load() == 0 {
		t.Error("want calls served during the drain and refused after it")
	}
}
