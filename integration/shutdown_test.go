package integration

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// TestSIGTERMUnderLoad sends SIGTERM while clients keep compiling: calls in
// flight finish OK, later calls are refused with UNAVAILABLE, and the process
// exits 0.
func TestSIGTERMUnderLoad(t *testing.T) {
	s := startServer(t, "--grace-period", "20s")
	client := s.client()
	base := readExample(t, "coding-agent.json")

	const workers = 8
	const maxCallsPerWorker = 500 // bounds the test even if the signal never lands
	var (
		signalled   atomic.Bool
		okBefore    atomic.Int64
		okAcross    atomic.Int64 // started before SIGTERM, finished OK after it
		unavailable atomic.Int64
		mu          sync.Mutex
		failures    []error
		wg          sync.WaitGroup
	)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < maxCallsPerWorker; i++ {
				// A unique tail per call defeats the token cache, so calls do real work.
				req := proto.CloneOf(base)
				last := req.State.Context.Messages[len(req.State.Context.Messages)-1]
				last.Parts[0].GetToolResult().Content += fmt.Sprintf("\n// worker %d call %d\n%s", w, i, base.State.Context.Messages[5].Parts[0].GetToolResult().GetContent()[:4000])
				startedBefore := !signalled.Load()
				_, err := client.Compile(ctx, req)
				switch {
				case err == nil && signalled.Load() && startedBefore:
					okAcross.Add(1)
				case err == nil && !signalled.Load():
					okBefore.Add(1)
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
		}(w)
	}
	// Let the load build up before the signal.
	for okBefore.Load() < 3*workers && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	signalled.Store(true)
	exitErr := s.stop(t)
	wg.Wait()

	for _, err := range failures {
		t.Errorf("call failed with something other than UNAVAILABLE after SIGTERM: %v", err)
	}
	if exitErr != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", exitErr, s.logs)
	}
	if unavailable.Load() == 0 {
		t.Error("no call was refused after SIGTERM")
	}
	t.Logf("ok before SIGTERM: %d; in flight at SIGTERM and finished OK: %d; refused: %d", okBefore.Load(), okAcross.Load(), unavailable.Load())
	if okAcross.Load() == 0 {
		t.Error("no call in flight at SIGTERM finished OK")
	}
}
