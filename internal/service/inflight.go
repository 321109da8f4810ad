package service

import (
	"container/list"
	"context"
	"sync"
)

// SmallCallBytes is the largest hold that is admitted ahead of larger calls
// waiting for room under MaxInflightBytes. Waiting in arrival order keeps a
// large call from being starved by a stream of smaller ones, but behind a
// queue of 16 MiB requests every small call would wait MaxQueueWait and be
// refused although there is room for it: a small call only borrows bytes
// the large ones are waiting for, briefly.
const SmallCallBytes = 64 << 10

// inflightBytes counts the bytes held of MaxInflightBytes. Calls wait in
// arrival order (as golang.org/x/sync/semaphore's Weighted does), except
// that a hold of at most SmallCallBytes is granted whenever it fits.
type inflightBytes struct {
	mu      sync.Mutex
	size    int64
	held    int64
	waiters list.List // of *inflightWaiter, in arrival order
}

type inflightWaiter struct {
	n     int64
	first bool          // the call holds bytes already
	ready chan struct{} // closed when the bytes are granted
}

func newInflightBytes(size int64) *inflightBytes {
	return &inflightBytes{size: size}
}

// tryAcquire takes n bytes if it may now without waiting.
func (b *inflightBytes) tryAcquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held+n <= b.size && (b.waiters.Len() == 0 || n <= SmallCallBytes) {
		b.held += n
		return true
	}
	return false
}

// acquire takes n bytes, waiting until they are granted or ctx ends (then
// its error, holding nothing). A call that already holds bytes waits first,
// ahead of those that hold none.
func (b *inflightBytes) acquire(ctx context.Context, n int64, first bool) error {
	if b.tryAcquire(n) {
		return nil
	}
	b.mu.Lock()
	w := &inflightWaiter{n: n, ready: make(chan struct{}), first: first}
	var elem *list.Element
	if first {
		// Behind the other calls that hold bytes, in arrival order.
		mark := b.waiters.Front()
		for mark != nil && mark.Value.(*inflightWaiter).first {
			mark = mark.Next()
		}
		if mark == nil {
			elem = b.waiters.PushBack(w)
		} else {
			elem = b.waiters.InsertBefore(w, mark)
		}
	} else {
		elem = b.waiters.PushBack(w)
	}
	b.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		select {
		case <-w.ready:
			// Granted as the context ended: the call may as well go on.
			b.mu.Unlock()
			return nil
		default:
		}
		b.waiters.Remove(elem)
		// Leaving the front may let those behind in.
		b.grantLocked()
		b.mu.Unlock()
		return ctx.Err()
	}
}

// release gives n bytes back and grants what waits and now fits.
func (b *inflightBytes) release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= n
	if b.held < 0 {
		panic("server: released more in-flight bytes than held")
	}
	b.grantLocked()
}

// grantLocked grants waiters in arrival order while they fit, and after the
// first that does not, the small ones that do.
func (b *inflightBytes) grantLocked() {
	blocked := false
	for e := b.waiters.Front(); e != nil; {
		w := e.Value.(*inflightWaiter)
		next := e.Next()
		if b.held+w.n <= b.size && (!blocked || w.n <= SmallCallBytes) {
			b.held += w.n
			b.waiters.Remove(e)
			close(w.ready)
		} else {
			blocked = true
		}
		e = next
	}
}
