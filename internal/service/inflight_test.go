package service

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// granted reports whether acquire(n) returns within a short wait.
func granted(t *testing.T, b *inflightBytes, n int64) (bool, func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := b.acquire(ctx, n, false); err != nil {
		return false, func() {}
	}
	return true, func() { b.release(n) }
}

// A queue of large calls must not stall a small one while there is room for
// it: the CountTokens of "Hello, world!" beside four 20 MiB ones.
func TestSmallCallsPassLargeOnesWaiting(t *testing.T) {
	b := newInflightBytes(48 << 20)
	for range 2 {
		if !b.tryAcquire(20 << 20) {
			t.Fatal("two 20 MiB holds must fit in 48 MiB")
		}
	}
	large := make(chan error, 1)
	go func() { large <- b.acquire(context.Background(), 20<<20, false) }()
	waitFor(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.waiters.Len() == 1 })

	if ok, done := granted(t, b, 100); !ok {
		t.Error("a 100-byte call waited behind a 20 MiB one with 8 MiB free")
	} else {
		done()
	}
	if b.tryAcquire(SmallCallBytes + 1) {
		t.Errorf("a call of %d bytes passed a larger one waiting: only calls of at most SmallCallBytes may", SmallCallBytes+1)
	}
	b.release(20 << 20)
	if err := <-large; err != nil {
		t.Fatalf("the waiting large call after a release: %v", err)
	}
	if got := b.held; got != 40<<20 {
		t.Errorf("held %d, want %d", got, 40<<20)
	}
}

// Large calls are granted in arrival order: a later one that would fit does
// not pass an earlier one that does not.
func TestLargeCallsWaitInArrivalOrder(t *testing.T) {
	b := newInflightBytes(10 << 20)
	if !b.tryAcquire(8 << 20) {
		t.Fatal("8 MiB of 10")
	}
	first := make(chan error, 1)
	go func() { first <- b.acquire(context.Background(), 6<<20, false) }()
	waitFor(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.waiters.Len() == 1 })
	if ok, done := granted(t, b, 1<<20); ok {
		done()
		t.Error("a 1 MiB call passed a 6 MiB one waiting before it")
	}
	b.release(8 << 20)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
}

// A call that holds bytes and needs more waits ahead of calls that hold
// none: given first, their bytes could only wait on its.
func TestHoldersWaitFirst(t *testing.T) {
	b := newInflightBytes(10 << 20)
	if !b.tryAcquire(8 << 20) {
		t.Fatal("8 MiB of 10")
	}
	newcomer := make(chan error, 1)
	go func() { newcomer <- b.acquire(context.Background(), 4<<20, false) }()
	waitFor(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.waiters.Len() == 1 })
	holder := make(chan error, 1)
	go func() { holder <- b.acquire(context.Background(), 3<<20, true) }()
	waitFor(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.waiters.Len() == 2 })
	b.release(1 << 20) // 7 held: room for the holder's 3 MiB, not for both
	select {
	case err := <-holder:
		if err != nil {
			t.Fatal(err)
		}
	case <-newcomer:
		t.Fatal("the newcomer was granted before the call that holds bytes")
	case <-time.After(5 * time.Second):
		t.Fatal("the holder was not granted 3 MiB with 3 MiB free")
	}
	b.release(10 << 20)
	if err := <-newcomer; err != nil {
		t.Fatal(err)
	}
}

// A waiter that gives up at the front lets those behind it in.
func TestGivingUpAtTheFrontLetsOthersIn(t *testing.T) {
	b := newInflightBytes(10 << 20)
	if !b.tryAcquire(6 << 20) {
		t.Fatal("6 MiB of 10")
	}
	ctx, cancel := context.WithCancel(context.Background())
	front := make(chan error, 1)
	go func() { front <- b.acquire(ctx, 8<<20, false) }()
	waitFor(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.waiters.Len() == 1 })
	behind := make(chan error, 1)
	go func() { behind <- b.acquire(context.Background(), 2<<20, false) }()
	waitFor(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.waiters.Len() == 2 })
	cancel()
	if err := <-front; err == nil {
		t.Error("the cancelled waiter was granted 8 MiB with 4 free")
	}
	select {
	case err := <-behind:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the 2 MiB call behind a cancelled waiter was never granted")
	}
}

// Whatever the order of holds, waits, cancellations and releases, no more
// than the size is ever held, and everything is back once all are done.
func TestInflightBytesNeverExceedTheSize(t *testing.T) {
	const size = 1 << 20
	b := newInflightBytes(size)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		maxSeen int64
	)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 200 {
				n := 1 + r.Int64N(size/2)
				if r.IntN(2) == 0 {
					n = 1 + r.Int64N(SmallCallBytes)
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.IntN(3))*time.Millisecond)
				err := b.acquire(ctx, n, r.IntN(4) == 0)
				cancel()
				if err != nil {
					continue
				}
				b.mu.Lock()
				held := b.held
				b.mu.Unlock()
				mu.Lock()
				maxSeen = max(maxSeen, held)
				mu.Unlock()
				b.release(n)
			}
		}()
	}
	wg.Wait()
	if maxSeen > size {
		t.Errorf("held %d bytes at once, size %d", maxSeen, size)
	}
	if b.held != 0 || b.waiters.Len() != 0 {
		t.Errorf("after every call: held %d, %d waiting; want 0, 0", b.held, b.waiters.Len())
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5 s")
		}
		time.Sleep(time.Millisecond)
	}
}
