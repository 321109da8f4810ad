package service

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/internal/adapter"
)

// quotaStatus is what a quota quotaStatus says, for comparing.
type quotaStatus struct {
	Code     codes.Code
	Message  string
	Reason   string
	Metadata map[string]string
	Retry    time.Duration
}

func quotaStatusOf(err error) quotaStatus {
	st := status.Convert(err)
	r := quotaStatus{Code: st.Code(), Message: st.Message()}
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			r.Reason, r.Metadata = d.GetReason(), d.GetMetadata()
		case *errdetails.RetryInfo:
			r.Retry = d.GetRetryDelay().AsDuration()
		}
	}
	return r
}

func quotaRefusal(caller, quota, value string, retry time.Duration) quotaStatus {
	return quotaStatus{Code: codes.ResourceExhausted, Message: "caller " + caller + ": quota " + quota + " " + value + " reached; retry after " + retry.String(),
		Reason: ReasonQuotaExceeded, Metadata: map[string]string{"quota": quota, "caller": caller}, Retry: retry}
}

// quotaRecord is a QuotaObserver that keeps what it is told.
type quotaRecord struct {
	mu      sync.Mutex
	refused []string // caller quota
	calls   map[string]int
}

func (r *quotaRecord) QuotaRefused(caller, quota string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refused = append(r.refused, caller+" "+quota)
}

func (r *quotaRecord) AddCallerCalls(caller string, delta int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	r.calls[caller] += delta
}

func (r *quotaRecord) get() ([]string, map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls := map[string]int{}
	for k, v := range r.calls {
		calls[k] = v
	}
	return append([]string(nil), r.refused...), calls
}

const (
	tokenA = "team-a-0123456789abcdef"
	tokenB = "team-b-0123456789abcdef"
)

// TestCallerQuotas: a caller at its quota of concurrent calls or of bytes
// in flight is refused at once, naming the caller and the quota, while the
// other caller's calls go through; the refusals and the calls in flight are
// reported by caller.
func TestCallerQuotas(t *testing.T) {
	tokens, err := LoadTokens(writeTokenFile(t, "team-a "+tokenA+"\nteam-b "+tokenB+"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	big := requestState()
	big.Context.SystemPrompt = strings.Repeat("x", 6000)
	for _, tc := range []struct {
		name   string
		quota  Quota
		second *ctxcv1.AgentState // team-a's call while its first is blocked
		want   quotaStatus
	}{
		{"concurrent calls", Quota{MaxConcurrentCalls: 1}, requestState(),
			quotaRefusal("team-a", "max_concurrent_calls", "1", RetryDelay)},
		{"bytes in flight", Quota{MaxInflightBytes: 10_000}, big,
			quotaRefusal("team-a", "max_inflight_bytes", "10000", RetryDelay)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			record := &quotaRecord{}
			h := start(t, TransportConfig{Tokens: tokens, QuotaObserver: record,
				Quotas: Quotas{Callers: map[string]Quota{"team-a": tc.quota}}})
			done := make(chan error, 1)
			go func() {
				_, err := h.client.Compile(bearer(context.Background(), tokenA), &ctxcv1.CompileRequest{State: big, Profile: "block"})
				done <- err
			}()
			<-h.catalog.Started
			_, err := h.client.Compile(bearer(context.Background(), tokenA), &ctxcv1.CompileRequest{State: tc.second})
			if diff := cmp.Diff(tc.want, quotaStatusOf(err)); diff != "" {
				t.Errorf("team-a's second call (-want +got):\n%s", diff)
			}
			// team-b has the default quota (none): it is not held back.
			for range 3 {
				if _, err := h.client.Compile(bearer(context.Background(), tokenB), &ctxcv1.CompileRequest{State: big}); err != nil {
					t.Errorf("team-b: %v", err)
				}
			}
			refused, calls := record.get()
			if diff := cmp.Diff([]string{"team-a " + tc.want.Metadata["quota"]}, refused); diff != "" {
				t.Errorf("refusals reported (-want +got):\n%s", diff)
			}
			if calls["team-a"] != 1 {
				t.Errorf("team-a has %d calls in flight while one is blocked, want 1", calls["team-a"])
			}
			close(h.catalog.Release)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			// What team-a held is given back when its call ends (the call
			// slot once the server has closed the stream).
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				_, err := h.client.Compile(bearer(context.Background(), tokenA), &ctxcv1.CompileRequest{State: tc.second})
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after team-a's first call ended: %v", err)
				}
			}
		})
	}
}

// TestAnonymousCallerHasTheDefaultQuota: without authentication every call
// is the caller "", which has quotas.default and is named "anonymous".
func TestAnonymousCallerHasTheDefaultQuota(t *testing.T) {
	h := start(t, TransportConfig{Quotas: Quotas{Default: Quota{MaxConcurrentCalls: 1}}})
	done := blockedCompile(h, requestState())
	_, err := h.client.ListProfiles(context.Background(), &ctxcv1.ListProfilesRequest{})
	if diff := cmp.Diff(quotaRefusal("anonymous", "max_concurrent_calls", "1", RetryDelay), quotaStatusOf(err)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	close(h.catalog.Release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestCallsPerSecondQuota: the token bucket lets Burst calls through at
// once, then one each 1/CallsPerSecond; a call refused says when the bucket
// has the next token, and takes none. Other callers have buckets of their own.
func TestCallsPerSecondQuota(t *testing.T) {
	q := newCallerQuotas(Quotas{Default: Quota{CallsPerSecond: 20, Burst: 2}, Callers: map[string]Quota{"slow": {CallsPerSecond: 0.5, Burst: 1}}},
		slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type step struct {
		at     time.Duration // after start
		caller string
		want   quotaStatus // zero: admitted
	}
	steps := []step{
		{0, "a", quotaStatus{}},
		{0, "a", quotaStatus{}},
		{0, "a", quotaRefusal("a", "calls_per_second", "20", 50*time.Millisecond)},
		{0, "b", quotaStatus{}}, // b's bucket is its own
		{30 * time.Millisecond, "a", quotaRefusal("a", "calls_per_second", "20", 20*time.Millisecond)},
		{50 * time.Millisecond, "a", quotaStatus{}}, // the refusals took no token
		{50 * time.Millisecond, "a", quotaRefusal("a", "calls_per_second", "20", 50*time.Millisecond)},
		{time.Second, "a", quotaStatus{}},
		{time.Second, "a", quotaStatus{}},
		{0, "slow", quotaStatus{}},
		{0, "slow", quotaRefusal("slow", "calls_per_second", "0.5", 2*time.Second)},
		{1500 * time.Millisecond, "slow", quotaRefusal("slow", "calls_per_second", "0.5", 500*time.Millisecond)},
		{1999*time.Millisecond + 600*time.Microsecond, "slow", quotaRefusal("slow", "calls_per_second", "0.5", time.Millisecond)}, // rounded up
	}
	for i, s := range steps {
		q.now = func() time.Time { return start.Add(s.at) }
		ctx := adapter.WithCaller(context.Background(), s.caller)
		leave, err := q.enter(ctx, "/ctxc.v1.ContextCompilerService/Compile")
		got := quotaStatus{}
		if err != nil {
			got = quotaStatusOf(err)
		} else {
			leave()
		}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("step %d (%s at %v) (-want +got):\n%s", i, s.caller, s.at, diff)
		}
	}
}

func TestQuotasValidate(t *testing.T) {
	const maxMessage = 1 << 20
	for _, tc := range []struct {
		name   string
		quotas Quotas
		want   []string
	}{
		{"none", Quotas{}, nil},
		{"generous", Quotas{Default: Quota{MaxConcurrentCalls: 8, MaxInflightBytes: maxMessage, CallsPerSecond: 20, Burst: 40},
			Callers: map[string]Quota{"batch": {MaxConcurrentCalls: 2, CallsPerSecond: 0.5, Burst: 1}}}, nil},
		{"every problem", Quotas{
			Default: Quota{MaxConcurrentCalls: -1, MaxInflightBytes: -1, CallsPerSecond: -2},
			Callers: map[string]Quota{
				"b":  {MaxInflightBytes: 1000, CallsPerSecond: 10},
				"a":  {CallsPerSecond: math.Inf(1), Burst: -1},
				"c":  {Burst: 5},
				"":   {MaxConcurrentCalls: 1},
				"ok": {MaxInflightBytes: 2 * maxMessage},
			}},
			[]string{
				"quotas.default.max_concurrent_calls: -1 must not be negative (0: no quota)",
				"quotas.default.max_inflight_bytes: -1 must not be negative (0: no quota)",
				"quotas.default.calls_per_second: -2 must be a number of at least 0 (0: no quota)",
				"quotas.callers: a caller's name must not be empty (quotas.default is the quota of callers without one)",
				"quotas.callers.a.calls_per_second: +Inf must be a number of at least 0 (0: no quota)",
				"quotas.callers.a.burst: -1 must not be negative",
				"quotas.callers.b.max_inflight_bytes: 1000 must be 0 or at least max_message_bytes (1048576), so that every request fits alone",
				"quotas.callers.b.burst: 0 must be at least 1 with calls_per_second (the calls a caller may make at once)",
				"quotas.callers.c.burst: 5 is set without calls_per_second, which it is the burst of",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, err := range tc.quotas.Validate(maxMessage) {
				got = append(got, err.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestQuotaFor: a caller's entry is its whole quota; others have the default.
func TestQuotaFor(t *testing.T) {
	q := Quotas{Default: Quota{MaxConcurrentCalls: 4, CallsPerSecond: 10, Burst: 10}, Callers: map[string]Quota{"batch": {MaxConcurrentCalls: 1}}}
	if diff := cmp.Diff(Quota{MaxConcurrentCalls: 1}, q.For("batch")); diff != "" {
		t.Errorf("batch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(q.Default, q.For("")); diff != "" {
		t.Errorf("anonymous (-want +got):\n%s", diff)
	}
	if err := errors.Join(q.Validate(1 << 20)...); err != nil {
		t.Error(err)
	}
}
