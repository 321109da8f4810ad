package limiter

import (
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newFake() *fakeClock { return &fakeClock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)} }

func TestNewRejectsBadConfig(t *testing.T) {
	if _, err := New(0, 1, nil); err == nil {
		t.Error("New(rate=0): no error")
	}
	if _, err := New(1, 0, nil); err == nil {
		t.Error("New(burst=0): no error")
	}
}

func TestStartsFull(t *testing.T) {
	c := newFake()
	b, _ := New(2, 5, c.now)
	if got := b.Tokens(); got != 5 {
		t.Fatalf("Tokens() = %v, want 5", got)
	}
}

func TestAllowBurst(t *testing.T) {
	c := newFake()
	b, _ := New(1, 3, c.now)
	allowed := 0
	for i := 0; i < 5; i++ {
		if b.Allow() {
			allowed++
		}
	}
	if allowed != 3 {
		t.Fatalf("allowed %d of 5 events with burst 3, want 3", allowed)
	}
}

func TestRefill(t *testing.T) {
	c := newFake()
	b, _ := New(10, 10, c.now)
	b.AllowN(10)
	c.advance(300 * time.Millisecond)
	if got := b.Tokens(); got < 2.99 || got > 3.01 {
		t.Errorf("after 300ms at 10/s: Tokens() = %v, want 3", got)
	}
}

func TestRefillCapsAtBurst(t *testing.T) {
	c := newFake()
	b, _ := New(100, 4, c.now)
	c.advance(time.Hour)
	if got := b.Tokens(); got != 4 {
		t.Errorf("Tokens() = %v, want burst 4", got)
	}
}

func TestReserve(t *testing.T) {
	tests := []struct {
		name  string
		rate  float64
		burst int
		n     int
		want  time.Duration
	}{
		{name: "within_burst", rate: 1, burst: 5, n: 3, want: 0},
		{name: "exactly_burst", rate: 1, burst: 5, n: 5, want: 0},
		{name: "one_over", rate: 2, burst: 5, n: 6, want: 500 * time.Millisecond},
		{name: "far_over", rate: 4, burst: 2, n: 10, want: 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newFake()
			b, _ := New(tt.rate, tt.burst, c.now)
			if got := b.Reserve(tt.n); got != tt.want {
				t.Errorf("Reserve(%d) = %v, want %v", tt.n, got, tt.want)
			}
		})
	}
}

func TestAllowN(t *testing.T) {
	tests := []struct {
		name  string
		burst int
		n     int
		want  bool
	}{
		{name: "less_than_burst", burst: 5, n: 2, want: true},
		{name: "equal_to_burst", burst: 5, n: 5, want: true},
		{name: "more_than_burst", burst: 5, n: 6, want: false},
		{name: "single_token_bucket", burst: 1, n: 1, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newFake()
			b, _ := New(1, tt.burst, c.now)
			if got := b.AllowN(tt.n); got != tt.want {
				t.Errorf("AllowN(%d) with burst %d = %v, want %v", tt.n, tt.burst, got, tt.want)
			}
		})
	}
}
