//go:build integration

package integration

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

const (
	floodToken  = "flood-0123456789abcdef"
	steadyToken = "steady-0123456789abcdef"
	rateToken   = "rate-0123456789abcdef01"
)

func bearerCtx(token string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
}

// quotaOf is the quota and caller a QUOTA_EXCEEDED refusal names, and
// whether it has a retry hint; "" when err is not one.
func quotaOf(err error) (quota, caller string, retry bool) {
	st := status.Convert(err)
	if st.Code() != codes.ResourceExhausted {
		return "", "", false
	}
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			if d.GetReason() == "QUOTA_EXCEEDED" {
				quota, caller = d.GetMetadata()["quota"], d.GetMetadata()["caller"]
			}
		case *errdetails.RetryInfo:
			retry = d.GetRetryDelay().AsDuration() > 0
		}
	}
	return quota, caller, retry
}

// TestOneCallerAtItsQuota: against the real binary with two tokens, caller
// "flood" (quota: 2 calls at once) sends 12 Compiles at a time, over and
// over, while caller "steady" (the default quota: none) calls in a loop.
// The flood's calls past its 2 are refused QUOTA_EXCEEDED naming it and
// max_concurrent_calls; every one of the steady caller's calls succeeds.
// A third caller's calls_per_second quota holds on the HTTP gateway too
// (429 with Retry-After), and /metrics counts the refusals by caller.
func TestOneCallerAtItsQuota(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("flood "+floodToken+"\nsteady "+steadyToken+"\nrate "+rateToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, `quotas:
  callers:
    flood: {max_concurrent_calls: 2}
    rate: {calls_per_second: 0.01, burst: 1}
`)
	s := startServer(t, "--auth-token-file", tokens, "--config", cfg, "--http-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0")
	c := s.client()
	heavy := &ctxcv1.CompileRequest{State: smallMessages(2000)}
	var refused, admitted, otherErrors atomic.Int64
	var wrong sync.Once
	stop := make(chan struct{})
	var flood sync.WaitGroup
	for range 12 {
		flood.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := c.Compile(bearerCtx(floodToken), heavy)
				switch quota, caller, retry := quotaOf(err); {
				case err == nil:
					admitted.Add(1)
				case quota == "max_concurrent_calls" && caller == "flood" && retry:
					refused.Add(1)
				default:
					otherErrors.Add(1)
					wrong.Do(func() { t.Errorf("flood: %v", err) })
				}
			}
		})
	}
	steadyFailed := 0
	for range 20 {
		if _, err := c.Compile(bearerCtx(steadyToken), readExample(t, "chat.json")); err != nil {
			steadyFailed++
			t.Errorf("steady: %v", err)
		}
	}
	close(stop)
	flood.Wait()
	t.Logf("flood: %d admitted, %d refused at its quota; steady: 20 calls, %d failed", admitted.Load(), refused.Load(), steadyFailed)
	if refused.Load() == 0 || admitted.Load() == 0 {
		t.Errorf("flood: %d admitted, %d refused: want both", admitted.Load(), refused.Load())
	}

	// calls_per_second on the HTTP gateway: the burst of 1, then 429.
	post := func() *http.Response {
		req, err := http.NewRequest(http.MethodPost, "http://"+s.httpAddr(t)+"/ctxc.v1.ContextCompilerService/ListProfiles", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+rateToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first := post()
	first.Body.Close()
	if first.StatusCode != http.StatusOK {
		t.Fatalf("rate's first call: %s", first.Status)
	}
	second := post()
	body, _ := io.ReadAll(second.Body)
	second.Body.Close()
	if second.StatusCode != http.StatusTooManyRequests || second.Header.Get("Retry-After") == "" ||
		!strings.Contains(string(body), "caller rate: quota calls_per_second 0.01 reached; retry after 1m") {
		t.Errorf("rate's second call: %s, Retry-After %q, %s", second.Status, second.Header.Get("Retry-After"), body)
	}

	metrics := metricsText(t, s, steadyToken)
	for _, want := range []string{
		`ctxc_quota_rejected_total{caller="flood",quota="max_concurrent_calls"}`,
		`ctxc_quota_rejected_total{caller="rate",quota="calls_per_second"} 1`,
		`ctxc_caller_inflight_calls{caller="steady"} 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// metricsText is the server's /metrics, read with token.
func metricsText(t *testing.T, s *server, token string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.metricsURL(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// metricInt is the value of one series (its name and labels as /metrics
// writes them) in the server's /metrics, read with token.
func metricInt(t *testing.T, s *server, token, series string) int {
	t.Helper()
	body := metricsText(t, s, token)
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("%s: %v", series, err)
			}
			return n
		}
	}
	t.Fatalf("/metrics has no %s:\n%s", series, body)
	return 0
}
