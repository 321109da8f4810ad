package adapter

import (
	"context"
	"fmt"

	"github.com/contextcompiler/ctxc/internal/tenant"
)

// What the transport (package server) tells the adapter of a call, through
// the call's context: who the caller is, whether it came over a connection,
// and the call's share of the in-flight byte budget.

// WithCaller records the authenticated caller of a call: the name of its
// bearer token, or the subject common name of its client certificate. Every
// store kept between calls is the caller's own (package tenant).
func WithCaller(ctx context.Context, name string) context.Context {
	return tenant.WithCaller(ctx, name)
}

// CallerFromContext returns the authenticated caller of a call (WithCaller).
// States kept for calls by reference are bound to it; interceptors (call
// logs, metrics) label calls with it.
func CallerFromContext(ctx context.Context) (string, bool) {
	return tenant.Caller(ctx)
}

// callerScope is the scope of a call's reusable work (compiler.Request's
// Scope): its authenticated caller, "" without authentication.
func callerScope(ctx context.Context) string {
	caller, _ := CallerFromContext(ctx)
	return caller
}

// directCallKey marks a call made in this process through the transport's
// direct calls (the proxy's).
type directCallKey struct{}

// WithDirectCall marks a call the proxy makes in this process: it came
// through the API's service description but over no connection, so it never
// names a state back (namesStates).
func WithDirectCall(ctx context.Context) context.Context {
	return context.WithValue(ctx, directCallKey{}, true)
}

// InflightBytes is a call's share of the server's budget of request bytes
// in flight (the transport's admission control). Decoding holds what it
// makes beyond the request's own bytes (an expanded template, a state named
// by reference), so that a small request cannot build a large call
// unaccounted.
type InflightBytes interface {
	// Hold makes the call hold at least total bytes, waiting for room as
	// admission does and refused as it is; a total the budget could never
	// hold is a *NeverFitsError.
	Hold(ctx context.Context, total int64) error
	// Grow makes the call hold n bytes more, as Hold does.
	Grow(ctx context.Context, n int64) error
	// Limit is the whole budget.
	Limit() int64
}

type inflightKey struct{}

// WithInflightBytes gives a call its share of the in-flight budget; a call
// without one (in process, not through the transport) holds nothing.
func WithInflightBytes(ctx context.Context, b InflightBytes) context.Context {
	return context.WithValue(ctx, inflightKey{}, b)
}

// NeverFitsError is a call's need of in-flight bytes that the budget could
// never hold: refused at once, where waiting could only time out.
type NeverFitsError struct{ Need, Limit int64 }

func (e *NeverFitsError) Error() string {
	return fmt.Sprintf("needs %d bytes in flight, over max_inflight_bytes %d", e.Need, e.Limit)
}
