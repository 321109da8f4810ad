package window

import (
	"testing"
	"time"
)

func TestHitLimit(t *testing.T) {
	c := New(time.Minute, 3)
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	for i := 0; i < 3; i++ {
		if !c.Hit("10.0.0.1", t0.Add(time.Duration(i)*time.Second)) {
			t.Fatalf("hit %d refused", i+1)
		}
	}
	if c.Hit("10.0.0.1", t0.Add(5*time.Second)) {
		t.Fatal("4th hit within a minute allowed")
	}
	if !c.Hit("10.0.0.2", t0.Add(5*time.Second)) {
		t.Fatal("other client refused")
	}
}

func TestWindowSlides(t *testing.T) {
	c := New(time.Minute, 2)
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	c.Hit("k", t0)
	c.Hit("k", t0.Add(10*time.Second))
	if got := c.Count("k", t0.Add(65*time.Second)); got != 1 {
		t.Fatalf("Count after 65s = %d, want 1", got)
	}
}

func TestEventAtEdgeExpires(t *testing.T) {
	c := New(time.Minute, 2)
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	c.Hit("k", t0)
	if got := c.Count("k", t0.Add(time.Minute)); got != 0 {
		t.Errorf("Count at exactly one window later = %d, want 0", got)
	}
}

func TestRemaining(t *testing.T) {
	c := New(time.Minute, 5)
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	c.Hit("k", t0)
	c.Hit("k", t0.Add(time.Second))
	if got := c.Remaining("k", t0.Add(2*time.Second)); got != 3 {
		t.Errorf("Remaining after 2 of 5 hits = %d, want 3", got)
	}
}

func TestForget(t *testing.T) {
	c := New(time.Minute, 1)
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	c.Hit("k", t0)
	c.Forget("k")
	if !c.Hit("k", t0.Add(time.Second)) {
		t.Error("hit after Forget refused")
	}
}

func TestKeys(t *testing.T) {
	c := New(time.Minute, 3)
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	c.Hit("b", t0)
	c.Hit("a", t0.Add(30*time.Second))
	c.Hit("c", t0.Add(-2*time.Minute))
	got := c.Keys(t0.Add(40 * time.Second))
	if len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("Keys = %v, want [a b]", got)
	}
}
