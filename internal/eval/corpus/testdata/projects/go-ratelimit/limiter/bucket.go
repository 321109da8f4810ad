// Package limiter implements a token-bucket rate limiter with an injectable clock.
package limiter

import (
	"fmt"
	"sync"
	"time"
)

// Clock returns the current time; tests replace it.
type Clock func() time.Time

// Bucket allows Rate events per second with bursts of up to Burst events.
type Bucket struct {
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
	now    Clock
}

// New returns a full bucket.
func New(rate float64, burst int, now Clock) (*Bucket, error) {
	if rate <= 0 {
		return nil, fmt.Errorf("limiter: rate must be positive, got %v", rate)
	}
	if burst < 1 {
		return nil, fmt.Errorf("limiter: burst must be at least 1, got %d", burst)
	}
	if now == nil {
		now = time.Now
	}
	return &Bucket{rate: rate, burst: float64(burst), tokens: float64(burst), last: now(), now: now}, nil
}

// refill adds the tokens earned since the last call. Callers hold mu.
func (b *Bucket) refill() {
	t := b.now()
	elapsed := t.Sub(b.last).Seconds()
	b.last = t
	b.tokens += elapsed * b.rate
	if b.tokens > b.burst {
		b.tokens = b.burst
	}
}

// Allow reports whether one event may happen now, consuming a token if so.
func (b *Bucket) Allow() bool {
	return b.AllowN(1)
}

// AllowN reports whether n events may happen now.
func (b *Bucket) AllowN(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	if b.tokens > float64(n) {
		b.tokens -= float64(n)
		return true
	}
	return false
}

// Reserve returns how long to wait before n events may happen, and takes the tokens.
func (b *Bucket) Reserve(n int) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	b.tokens -= float64(n)
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / b.rate * float64(time.Second))
}

// Tokens returns the tokens currently available.
func (b *Bucket) Tokens() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	return b.tokens
}
