package service

import (
	"context"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"
)

// A reply handed to gRPC is queued whole on its connection and written as
// the client's HTTP/2 flow-control window allows: a client that sends small
// requests and never reads their large replies would make the server hold
// them all, whatever admission counted on the way in. So each network
// connection keeps a ledger of the reply bytes queued on it and not yet
// written to its socket. A call's in-flight bytes (MaxInflightBytes) pass to
// the ledger with its reply, and are released as the socket takes the bytes;
// and a connection owing more than MaxUnreadBytesPerConnection gets no new
// call until it reads (a call waits up to MaxQueueWait, then is refused).
//
// The ledger counts every byte written as paying the oldest reply: frame
// headers and pings make it release slightly early, never late. A reply
// gRPC drops unwritten (its client reset the stream) is never paid; it is
// forgiven once it is older than the longest call (MaxCallTimeout), when
// its client has certainly given up on it, and at the latest when the
// connection closes.

// unreadListener wraps each accepted connection with a reply ledger.
type unreadListener struct {
	net.Listener
	release func(int64) // gives in-flight bytes back
	expiry  time.Duration
}

func (l unreadListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	ledger := &replyLedger{release: l.release, expiry: l.expiry, paid: make(chan struct{})}
	slot, _ := c.(*slotConn)
	return &ledgerConn{Conn: c, ledger: ledger, slot: slot}, nil
}

// ledgerConn is a network connection that pays its ledger as it writes.
type ledgerConn struct {
	net.Conn
	ledger *replyLedger
	slot   *slotConn // nil without MaxConnections
	once   sync.Once
}

func (c *ledgerConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.ledger.pay(int64(n))
	return n, err
}

func (c *ledgerConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.ledger.close)
	return err
}

// RemoteAddr carries the ledger and the slot to the calls of the connection
// (gRPC puts it in their peer.Peer); it prints as the client's address.
func (c *ledgerConn) RemoteAddr() net.Addr { return ledgerAddr{c.Conn.RemoteAddr(), c.ledger, c.slot} }

type ledgerAddr struct {
	net.Addr
	ledger *replyLedger
	slot   *slotConn
}

// ledgerOf is the reply ledger of the connection a call came on, or nil (the
// gateway's in-process connection, direct calls).
func ledgerOf(ctx context.Context) *replyLedger {
	if p, ok := peer.FromContext(ctx); ok {
		if a, ok := p.Addr.(ledgerAddr); ok {
			return a.ledger
		}
	}
	return nil
}

// replyLedger is what one connection owes: its queued replies, oldest first,
// each holding its bytes of MaxInflightBytes until written.
type replyLedger struct {
	release func(int64)
	expiry  time.Duration

	mu      sync.Mutex
	replies []owedReply
	owed    int64
	closed  bool
	seq     uint64
	paid    chan struct{} // closed and replaced whenever owed falls
}

type owedReply struct {
	seq   uint64
	bytes int64 // not yet written
	held  int64 // of MaxInflightBytes, released when the reply is done with
	at    time.Time
}

// owe records a reply of n bytes about to be queued that holds held bytes
// of MaxInflightBytes until it is written, and returns the reply's number.
// A closed connection's reply is never written: its bytes go back at once.
func (l *replyLedger) owe(n, held int64) uint64 {
	l.mu.Lock()
	if l.closed || n <= 0 {
		l.mu.Unlock()
		l.release(held)
		return 0
	}
	l.seq++
	seq := l.seq // read under the lock: a concurrent owe moves it on
	l.replies = append(l.replies, owedReply{seq, n, held, time.Now()})
	l.owed += n
	l.mu.Unlock()
	return seq
}

// forgive takes n bytes off reply seq: it went out compressed.
func (l *replyLedger) forgive(seq uint64, n int64) {
	l.mu.Lock()
	var paid, freed int64
	for i := len(l.replies) - 1; i >= 0; i-- {
		if r := &l.replies[i]; r.seq == seq {
			paid = min(n, r.bytes)
			if r.bytes -= paid; r.bytes == 0 {
				freed = r.held
				l.replies = append(l.replies[:i], l.replies[i+1:]...)
			}
			break
		}
	}
	l.settle(paid, freed)
}

// pay records n bytes written to the socket.
func (l *replyLedger) pay(n int64) {
	if n <= 0 {
		return
	}
	l.mu.Lock()
	var paid, freed int64
	for n > 0 && len(l.replies) > 0 {
		r := &l.replies[0]
		k := min(n, r.bytes)
		r.bytes -= k
		n -= k
		paid += k
		if r.bytes == 0 {
			freed += r.held
			l.replies = l.replies[1:]
		}
	}
	l.settle(paid, freed)
}

// settle takes paid bytes off what is owed and releases freed in-flight
// bytes; it unlocks.
func (l *replyLedger) settle(paid, freed int64) {
	if paid > 0 {
		l.owed -= paid
		close(l.paid)
		l.paid = make(chan struct{})
	}
	l.mu.Unlock()
	if freed > 0 {
		l.release(freed)
	}
}

// unread is what the connection owes after forgiving replies older than the
// expiry, and a channel closed when that falls.
func (l *replyLedger) unread(now time.Time) (int64, <-chan struct{}) {
	l.mu.Lock()
	var forgiven, freed int64
	for len(l.replies) > 0 && now.Sub(l.replies[0].at) > l.expiry {
		forgiven += l.replies[0].bytes
		freed += l.replies[0].held
		l.replies = l.replies[1:]
	}
	owed, paid := l.owed-forgiven, l.paid
	l.settle(forgiven, freed)
	return owed, paid
}

// close forgives everything: nothing more will be written.
func (l *replyLedger) close() {
	l.mu.Lock()
	l.closed = true
	var freed int64
	for _, r := range l.replies {
		freed += r.held
	}
	l.replies = nil
	l.settle(l.owed, freed)
}

// waitUnread waits until the connection owes at most limit, for up to wait;
// it reports whether it does.
func (l *replyLedger) waitUnread(ctx context.Context, limit int64, wait time.Duration) bool {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		owed, paid := l.unread(time.Now())
		if owed <= limit {
			return true
		}
		select {
		case <-paid:
		case <-deadline.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// A reply is owed at its encoded size before gRPC compresses it; what goes
// on the wire is known only once it is queued (stats.OutPayload). replyStats
// gives each API call a cell that links the two, so that a compressed reply
// is owed what its client will actually be sent.
type replyStats struct{}

type replyCellKey struct{}

type replyCell struct {
	mu     sync.Mutex
	ledger *replyLedger
	seq    uint64
	size   int64
}

func replyCellOf(ctx context.Context) *replyCell {
	c, _ := ctx.Value(replyCellKey{}).(*replyCell)
	return c
}

// owed records that the call's reply is reply seq of ledger, of size bytes.
func (c *replyCell) owed(l *replyLedger, seq uint64, size int64) {
	c.mu.Lock()
	c.ledger, c.seq, c.size = l, seq, size
	c.mu.Unlock()
}

func (replyStats) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	if !isAPI(info.FullMethodName) {
		return ctx
	}
	return context.WithValue(ctx, replyCellKey{}, &replyCell{})
}

func (replyStats) HandleRPC(ctx context.Context, s stats.RPCStats) {
	out, ok := s.(*stats.OutPayload)
	if !ok {
		return
	}
	c := replyCellOf(ctx)
	if c == nil {
		return
	}
	c.mu.Lock()
	l, seq, size := c.ledger, c.seq, c.size
	c.mu.Unlock()
	if l != nil && seq != 0 && int64(out.WireLength) < size {
		l.forgive(seq, size-int64(out.WireLength))
	}
}

func (replyStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (replyStats) HandleConn(context.Context, stats.ConnStats)                       {}
