package retry

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"
)

func noSleep(context.Context, time.Duration) error { return nil }

func policy(t *testing.T, attempts int) Policy {
	return Policy{Attempts: attempts, Base: 100 * time.Millisecond, Max: 2 * time.Second, Sleep: noSleep, Log: t.Logf}
}

func TestDelay(t *testing.T) {
	p := Policy{Base: 100 * time.Millisecond, Max: time.Second}
	for n, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 4: 800 * time.Millisecond, 5: time.Second, 70: time.Second} {
		if got := p.Delay(n); got != want {
			t.Errorf("Delay(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestSucceedsAfterTransientErrors(t *testing.T) {
	calls := 0
	err := policy(t, 5).Do(context.Background(), func(context.Context) error {
		calls++
		if calls < 3 {
			return fmt.Errorf("dial tcp 10.0.0.7:5432: %w", syscall.ECONNREFUSED)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	if calls != 3 {
		t.Errorf("calls = %d, want 3", calls)
	}
}

func TestExhausted(t *testing.T) {
	err := policy(t, 3).Do(context.Background(), func(context.Context) error {
		return errors.New("upstream returned 503 Service Unavailable")
	})
	if !errors.Is(err, ErrExhausted) {
		t.Fatalf("err = %v, want ErrExhausted", err)
	}
	t.Logf("got expected error: %v", err)
}

func TestPermanentErrorStopsRetrying(t *testing.T) {
	calls := 0
	denied := errors.New("401 Unauthorized: token expired")
	err := policy(t, 5).Do(context.Background(), func(context.Context) error {
		calls++
		return &Permanent{Err: denied}
	})
	if !errors.Is(err, denied) || calls != 1 {
		t.Fatalf("err = %v after %d calls, want the permanent error after 1 call", err, calls)
	}
	t.Logf("permanent failure surfaced as expected: %v", err)
}

func TestContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := policy(t, 10)
	p.Sleep = sleepCtx
	calls := 0
	err := p.Do(ctx, func(context.Context) error {
		calls++
		if calls == 2 {
			cancel()
		}
		return errors.New("connection reset by peer")
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	t.Logf("stopped with: %v", err)
}

func TestJitterBounded(t *testing.T) {
	var slept []time.Duration
	p := Policy{Attempts: 4, Base: 100 * time.Millisecond, Max: time.Second, Jitter: 0.5,
		Sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }}
	_ = p.Do(context.Background(), func(context.Context) error { return errors.New("fail") })
	for i, d := range slept {
		base := p.Delay(i + 1)
		if d < base || d > base+base/2 {
			t.Errorf("sleep %d = %s, want within [%s, %s]", i+1, d, base, base+base/2)
		}
	}
}
