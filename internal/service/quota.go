package service

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/contextcompiler/ctxc/internal/adapter"
)

// Quotas per caller keep one caller from crowding out the others on a
// server they share. The server's own limits (max_concurrent_calls,
// max_inflight_bytes) are shared in arrival order: one caller calling
// faster than the server answers would fill them, and the others' calls
// would wait behind its calls or be refused with them. A caller's quota is
// checked before its call takes anything shared (the call slot, the queue
// for max_inflight_bytes), and a call over it is refused at once, never
// queued: so a caller holds at most its quota of the shared limits, and
// what is left is the others'. That is the fairness: no caller can hold
// more than its share of what every caller waits for.

// Quota is what one caller may hold of the server at once, and how fast it
// may call; 0 is no quota (the server's limits alone hold). The yaml tags
// are the keys of the config file's quotas.default and quotas.callers.<name>.
type Quota struct {
	// MaxConcurrentCalls bounds the caller's API calls being received or
	// worked on, checked when a call's headers arrive, before the server's
	// max_concurrent_calls.
	MaxConcurrentCalls int `yaml:"max_concurrent_calls"`
	// MaxInflightBytes bounds the summed size of the caller's requests being
	// worked on (each request's size, held until its call ends), checked
	// before the call waits for room under the server's max_inflight_bytes.
	MaxInflightBytes int64 `yaml:"max_inflight_bytes"`
	// CallsPerSecond is the rate of the caller's API calls over time, with
	// Burst calls at once above it (a token bucket of Burst tokens refilled
	// at CallsPerSecond).
	CallsPerSecond float64 `yaml:"calls_per_second"`
	Burst          int     `yaml:"burst"`
}

// Quotas are the quota of every caller (Default) and, by caller name (a
// token's name from the token file, or a client certificate's common name),
// the quotas of those that differ: a caller's entry is its whole quota, so
// what it leaves out is unlimited, not the default. Without authentication
// every call is the one caller "", which has the default.
type Quotas struct {
	Default Quota            `yaml:"default"`
	Callers map[string]Quota `yaml:"callers"`
}

// For is the quota of caller.
func (q Quotas) For(caller string) Quota {
	if c, ok := q.Callers[caller]; ok {
		return c
	}
	return q.Default
}

// Validate returns every problem of the quotas, each naming its key
// (quotas.default.burst, quotas.callers.<name>.max_inflight_bytes, ...).
// maxMessageBytes is the largest request: a byte quota must let it in alone.
func (q Quotas) Validate(maxMessageBytes int) []error {
	problems := q.Default.validate("quotas.default", maxMessageBytes)
	names := make([]string, 0, len(q.Callers))
	for name := range q.Callers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		key := "quotas.callers." + name
		if name == "" {
			problems = append(problems, fmt.Errorf("quotas.callers: a caller's name must not be empty (quotas.default is the quota of callers without one)"))
			continue
		}
		problems = append(problems, q.Callers[name].validate(key, maxMessageBytes)...)
	}
	return problems
}

func (q Quota) validate(key string, maxMessageBytes int) []error {
	var problems []error
	bad := func(field, format string, args ...any) {
		problems = append(problems, fmt.Errorf("%s.%s: %s", key, field, fmt.Sprintf(format, args...)))
	}
	if q.MaxConcurrentCalls < 0 {
		bad(QuotaConcurrentCalls, "%d must not be negative (0: no quota)", q.MaxConcurrentCalls)
	}
	switch {
	case q.MaxInflightBytes < 0:
		bad(QuotaInflightBytes, "%d must not be negative (0: no quota)", q.MaxInflightBytes)
	case q.MaxInflightBytes > 0 && q.MaxInflightBytes < int64(maxMessageBytes):
		bad(QuotaInflightBytes, "%d must be 0 or at least max_message_bytes (%d), so that every request fits alone", q.MaxInflightBytes, maxMessageBytes)
	}
	switch {
	case math.IsNaN(q.CallsPerSecond) || math.IsInf(q.CallsPerSecond, 0) || q.CallsPerSecond < 0:
		bad(QuotaCallsPerSecond, "%v must be a number of at least 0 (0: no quota)", q.CallsPerSecond)
	case q.CallsPerSecond > 0 && q.Burst < 1:
		bad("burst", "%d must be at least 1 with calls_per_second (the calls a caller may make at once)", q.Burst)
	case q.CallsPerSecond == 0 && q.Burst != 0:
		bad("burst", "%d is set without calls_per_second, which it is the burst of", q.Burst)
	}
	if q.Burst < 0 {
		bad("burst", "%d must not be negative", q.Burst)
	}
	return problems
}

// The quotas a call is refused for, named by their configuration keys (the
// ErrorInfo's quota, the metrics' quota label).
const (
	QuotaConcurrentCalls = "max_concurrent_calls"
	QuotaInflightBytes   = "max_inflight_bytes"
	QuotaCallsPerSecond  = "calls_per_second"
)

// QuotaNames are the quotas a call may be refused for: every quota a
// QuotaObserver is told of.
func QuotaNames() []string {
	return []string{QuotaConcurrentCalls, QuotaInflightBytes, QuotaCallsPerSecond}
}

// ReasonQuotaExceeded is the ErrorInfo reason of a call refused because its
// caller is at one of its quotas (RESOURCE_EXHAUSTED, with the quota and the
// caller in the ErrorInfo's metadata and a RetryInfo).
const ReasonQuotaExceeded = "QUOTA_EXCEEDED"

// AnonymousCaller names the caller of calls without authentication ("") in
// refusals and metrics.
const AnonymousCaller = "anonymous"

// QuotaObserver is what the quotas report to, for metrics
// (*metrics.Admission implements it).
type QuotaObserver interface {
	// QuotaRefused counts a call of caller ("" without authentication)
	// refused at quota (one of the Quota* names).
	QuotaRefused(caller, quota string)
	// AddCallerCalls adds delta to caller's API calls in flight.
	AddCallerCalls(caller string, delta int)
}

// callerQuotas holds what each caller holds of its quota. Its map has an
// entry for each caller that has called: the names of the token file (or
// of the client certificates), a bounded set.
type callerQuotas struct {
	quotas   Quotas
	now      func() time.Time
	observer QuotaObserver // nil: none
	log      *slog.Logger
	logged   *throttle // a flood of refusals logs a line a second

	mu      sync.Mutex
	callers map[string]*callerUse
}

// callerUse is what one caller holds.
type callerUse struct {
	calls int
	bytes int64
	rate  *rate.Limiter // nil: no calls_per_second
}

func newCallerQuotas(q Quotas, log *slog.Logger, observer QuotaObserver) *callerQuotas {
	return &callerQuotas{quotas: q, now: time.Now, observer: observer, log: log, logged: newThrottle(), callers: map[string]*callerUse{}}
}

// useLocked is caller's entry, made on its first call.
func (c *callerQuotas) useLocked(caller string, q Quota) *callerUse {
	u, ok := c.callers[caller]
	if !ok {
		u = &callerUse{}
		if q.CallsPerSecond > 0 {
			u.rate = rate.NewLimiter(rate.Limit(q.CallsPerSecond), q.Burst)
		}
		c.callers[caller] = u
	}
	return u
}

// callerOf is the authenticated caller of a call, "" without authentication.
func callerOf(ctx context.Context) string {
	caller, _ := adapter.CallerFromContext(ctx)
	return caller
}

// enter counts an API call against its caller's concurrency and rate,
// when its headers arrive; leave is to be called when the call ends. A call
// over either is refused (QUOTA_EXCEEDED) and holds nothing. It never waits.
func (c *callerQuotas) enter(ctx context.Context, method string) (leave func(), err error) {
	if c == nil {
		return func() {}, nil
	}
	caller := callerOf(ctx)
	q := c.quotas.For(caller)
	c.mu.Lock()
	u := c.useLocked(caller, q)
	if q.MaxConcurrentCalls > 0 && u.calls >= q.MaxConcurrentCalls {
		c.mu.Unlock()
		return nil, c.refuse(ctx, method, caller, QuotaConcurrentCalls, strconv.Itoa(q.MaxConcurrentCalls), RetryDelay)
	}
	if u.rate != nil {
		now := c.now()
		r := u.rate.ReserveN(now, 1) // always OK: Burst is at least 1
		if wait := r.DelayFrom(now); wait > 0 {
			r.CancelAt(now) // the token goes back: the call does not happen
			c.mu.Unlock()
			return nil, c.refuse(ctx, method, caller, QuotaCallsPerSecond, strconv.FormatFloat(q.CallsPerSecond, 'g', -1, 64), wait)
		}
	}
	u.calls++
	c.mu.Unlock()
	c.added(caller, 1)
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			u.calls--
			c.mu.Unlock()
			c.added(caller, -1)
		})
	}, nil
}

func (c *callerQuotas) added(caller string, delta int) {
	if c.observer != nil {
		c.observer.AddCallerCalls(caller, delta)
	}
}

// unary holds an API call's request size against its caller's
// MaxInflightBytes for the call, before the call waits for room under the
// server's max_inflight_bytes; a call over it is refused at once.
func (c *callerQuotas) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if !isAPI(info.FullMethod) {
		return handler(ctx, req)
	}
	caller := callerOf(ctx)
	q := c.quotas.For(caller)
	if q.MaxInflightBytes <= 0 {
		return handler(ctx, req)
	}
	n := int64(1)
	if m, ok := req.(proto.Message); ok {
		n = max(n, int64(proto.Size(m)))
	}
	c.mu.Lock()
	u := c.useLocked(caller, q)
	if u.bytes+n > q.MaxInflightBytes {
		c.mu.Unlock()
		return nil, c.refuse(ctx, info.FullMethod, caller, QuotaInflightBytes, strconv.FormatInt(q.MaxInflightBytes, 10), RetryDelay)
	}
	u.bytes += n
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		u.bytes -= n
		c.mu.Unlock()
	}()
	return handler(ctx, req)
}

// refuse counts, logs (at most a line a second) and returns the refusal of
// a call of caller at quota (of value), to be retried after retry.
func (c *callerQuotas) refuse(ctx context.Context, method, caller, quota, value string, retry time.Duration) error {
	if c.observer != nil {
		c.observer.QuotaRefused(caller, quota)
	}
	if suppressed, ok := c.logged.allow(); ok {
		c.log.WarnContext(ctx, "call refused: caller at its quota", "method", method, "caller", displayCaller(caller), "quota", quota,
			"retry_after", retry.String(), "refused_unlogged_since_last", suppressed)
	}
	return quotaExceeded(caller, quota, value, retry)
}

// displayCaller is how refusals and metrics name caller.
func displayCaller(caller string) string {
	if caller == "" {
		return AnonymousCaller
	}
	return caller
}

// quotaExceeded is the status of a call refused because its caller is at
// quota: RESOURCE_EXHAUSTED naming the caller and the quota, with both in
// an ErrorInfo and when to retry in a RetryInfo (whole milliseconds, at
// least one).
func quotaExceeded(caller, quota, value string, retry time.Duration) error {
	retry = max(retry+time.Millisecond-1, time.Millisecond).Truncate(time.Millisecond) // rounded up
	name := displayCaller(caller)
	st := status.New(codes.ResourceExhausted, fmt.Sprintf("caller %s: quota %s %s reached; retry after %s", name, quota, value, retry))
	withDetails, err := st.WithDetails(
		&errdetails.ErrorInfo{Reason: ReasonQuotaExceeded, Domain: adapter.ErrorDomain, Metadata: map[string]string{"quota": quota, "caller": name}},
		&errdetails.RetryInfo{RetryDelay: durationpb.New(retry)})
	if err != nil {
		return st.Err()
	}
	return withDetails.Err()
}
