// Package retry calls an operation again after transient failures, with
// exponential backoff and jitter.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Permanent wraps an error that must not be retried.
type Permanent struct{ Err error }

func (p *Permanent) Error() string { return "permanent: " + p.Err.Error() }
func (p *Permanent) Unwrap() error { return p.Err }

// Policy says how often and how long to retry.
type Policy struct {
	Attempts int
	Base     time.Duration
	Max      time.Duration
	Jitter   float64 // 0..1, fraction of the delay randomised
	Sleep    func(context.Context, time.Duration) error
	Log      func(format string, args ...any)
}

// ErrExhausted is returned (wrapped) when every attempt failed.
var ErrExhausted = errors.New("retry: attempts exhausted")

// Delay returns the backoff before attempt n (1-based), without jitter.
func (p Policy) Delay(n int) time.Duration {
	d := p.Base << (n - 1)
	if d <= 0 || d > p.Max {
		return p.Max
	}
	return d
}

// Do runs op until it succeeds, returns a *Permanent error, the context ends
// or the attempts are used up.
func (p Policy) Do(ctx context.Context, op func(context.Context) error) error {
	sleep := p.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	var last error
	for n := 1; n <= p.Attempts; n++ {
		err := op(ctx)
		if err == nil {
			if n > 1 && p.Log != nil {
				p.Log("retry: succeeded on attempt %d after error: %v", n, last)
			}
			return nil
		}
		var perm *Permanent
		if errors.As(err, &perm) {
			return perm.Err
		}
		last = err
		if n == p.Attempts {
			break
		}
		d := p.Delay(n)
		if p.Jitter > 0 {
			d += time.Duration(rand.Float64() * p.Jitter * float64(d))
		}
		if p.Log != nil {
			p.Log("retry: attempt %d/%d failed: %v; retrying in %s", n, p.Attempts, err, p.Delay(n))
		}
		if err := sleep(ctx, d); err != nil {
			return fmt.Errorf("retry: interrupted after %d attempts: %w (last error: %v)", n, err, last)
		}
	}
	return fmt.Errorf("%w after %d attempts: %v", ErrExhausted, p.Attempts, last)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
