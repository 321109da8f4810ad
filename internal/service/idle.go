package service

import (
	"runtime/debug"
	"sync"
	"time"
)

// After a burst of large calls the Go runtime keeps the memory it grew to
// and gives it back to the system over minutes: a server that has gone idle
// would show its peak resident size long after. So when nothing is in flight
// any more after at least idleReleaseAfterBytes was, and nothing arrives for
// idleReleaseDelay, the memory is returned at once (debug.FreeOSMemory, a
// full collection: cheap on an idle heap), at most once per idleReleaseEvery.
const (
	idleReleaseAfterBytes = 32 << 20
	idleReleaseDelay      = 500 * time.Millisecond
	idleReleaseEvery      = 10 * time.Second
)

type idleRelease struct {
	mu       sync.Mutex
	inflight int64
	peak     int64 // the most in flight since the last release
	last     time.Time
	timer    *time.Timer
	free     func()
}

func newIdleRelease() *idleRelease { return &idleRelease{free: debug.FreeOSMemory} }

// added records n more bytes in flight (fewer when negative).
func (r *idleRelease) added(n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inflight += n
	r.peak = max(r.peak, r.inflight)
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	if r.inflight > 0 || r.peak < idleReleaseAfterBytes {
		return
	}
	wait := max(idleReleaseDelay, time.Until(r.last.Add(idleReleaseEvery)))
	r.timer = time.AfterFunc(wait, r.release)
}

func (r *idleRelease) release() {
	r.mu.Lock()
	if r.inflight > 0 {
		r.mu.Unlock()
		return
	}
	r.peak, r.last, r.timer = 0, time.Now(), nil
	r.mu.Unlock()
	r.free()
}
