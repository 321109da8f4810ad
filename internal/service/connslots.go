package service

import (
	"container/list"
	"context"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/peer"
)

// The gRPC port has MaxConnections slots. Health checks need no token, so
// a client with no credentials can open connections that only check health,
// or that never send anything, until every slot is taken and a client with
// a token cannot connect at all. So when every slot is taken and another
// client connects, the oldest connection that has made no authenticated API
// call is closed to make room for it; a connection that has is never closed
// for this. Only when every open connection has authenticated does the new
// one wait (as in the kernel's backlog) for a slot to free.

// limitConnections wraps lis so that at most n of its connections are open
// at once, evicting as above; evicted connections are logged, at most one
// line every refusalLogInterval.
func limitConnections(lis net.Listener, n int, log *slog.Logger) *slotListener {
	return &slotListener{Listener: lis, max: n, log: log, freed: make(chan struct{}, 1), closed: make(chan struct{}), evictions: newThrottle()}
}

type slotListener struct {
	net.Listener
	max int
	log *slog.Logger

	mu        sync.Mutex
	open      int
	unproven  list.List // of *slotConn without an authenticated call, oldest first
	freed     chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
	evictions *throttle
}

// slotConn is a connection holding a slot.
type slotConn struct {
	net.Conn
	l       *slotListener
	elem    *list.Element // in l.unproven, nil once proven
	proven  atomic.Bool
	release sync.Once
}

func (l *slotListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for {
		l.mu.Lock()
		if l.open < l.max {
			l.open++
			sc := &slotConn{Conn: c, l: l}
			sc.elem = l.unproven.PushBack(sc)
			l.mu.Unlock()
			return sc, nil
		}
		var victim *slotConn
		if front := l.unproven.Front(); front != nil {
			victim = front.Value.(*slotConn)
		}
		l.mu.Unlock()
		if victim != nil {
			l.evicted(victim, c)
			victim.Close() // frees its slot
			continue
		}
		select {
		case <-l.freed:
		case <-l.closed:
			c.Close()
			return nil, net.ErrClosed
		}
	}
}

func (l *slotListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

func (l *slotListener) evicted(victim *slotConn, newcomer net.Conn) {
	if suppressed, ok := l.evictions.allow(); ok {
		l.log.Warn("connection closed to make room: every max_connections slot was taken; it had made no authenticated call",
			"client", victim.RemoteAddr().String(), "for", newcomer.RemoteAddr().String(), "evicted_unlogged_since_last", suppressed)
	}
}

// prove marks the connection as having made an authenticated API call.
func (c *slotConn) prove() {
	if c.proven.Swap(true) {
		return
	}
	c.l.mu.Lock()
	if c.elem != nil {
		c.l.unproven.Remove(c.elem)
		c.elem = nil
	}
	c.l.mu.Unlock()
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.release.Do(func() {
		l := c.l
		l.mu.Lock()
		if c.elem != nil {
			l.unproven.Remove(c.elem)
			c.elem = nil
		}
		l.open--
		l.mu.Unlock()
		select {
		case l.freed <- struct{}{}:
		default:
		}
	})
	return err
}

// provenCall marks the connection of ctx's call as having made an
// authenticated API call, so that it keeps its slot.
func provenCall(ctx context.Context) {
	if p, ok := peer.FromContext(ctx); ok {
		if a, ok := p.Addr.(ledgerAddr); ok && a.slot != nil {
			a.slot.prove()
		}
	}
}
