package service

import (
	"sync/atomic"
	"testing"
	"time"
)

// Memory goes back to the system once after a large burst has ended, not
// while calls are in flight, not after small ones, and not more than once
// per idleReleaseEvery.
func TestIdleReleaseAfterLargeBursts(t *testing.T) {
	var freed atomic.Int32
	r := &idleRelease{free: func() { freed.Add(1) }}
	wait := func() { time.Sleep(idleReleaseDelay + 200*time.Millisecond) }

	r.added(1 << 20)
	r.added(-1 << 20)
	wait()
	if n := freed.Load(); n != 0 {
		t.Fatalf("released %d times after 1 MiB in flight, want 0", n)
	}
	r.added(idleReleaseAfterBytes)
	r.added(1 << 20)
	r.added(-idleReleaseAfterBytes)
	wait()
	if n := freed.Load(); n != 0 {
		t.Fatalf("released %d times with 1 MiB still in flight, want 0", n)
	}
	r.added(-1 << 20)
	wait()
	if n := freed.Load(); n != 1 {
		t.Fatalf("released %d times once idle after a large burst, want 1", n)
	}
	r.added(idleReleaseAfterBytes)
	r.added(-idleReleaseAfterBytes)
	wait()
	if n := freed.Load(); n != 1 {
		t.Fatalf("released %d times within %v, want 1", n, idleReleaseEvery)
	}
}
