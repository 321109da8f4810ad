package service

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// One client must not take every connection slot: a thousand connections
// that never authenticate (health needs no token) or idle sockets that a
// client reopens as the handshake timeout closes them would lock everyone
// else out. So each remote address holds at most a share of the slots; a
// connection beyond its address's share never reaches the server, and the
// slot stays free for others. It is held unread for a while before it is
// closed (a tarpit): closed at once, a client's reconnect loop spins, and
// on a shared machine its reconnections cost everyone's CPU.

// LimitPerAddress wraps lis so that each remote IP address has at most n
// connections open at once; n <= 0 leaves lis as it is. A connection over
// its address's share is held unread for hold (at most MaxHeldConnections at
// once, the rest closed at once), then closed. Unix-socket connections,
// which have no address, are not limited.
func LimitPerAddress(lis net.Listener, n int, hold time.Duration) net.Listener {
	if n <= 0 {
		return lis
	}
	return &perAddressListener{Listener: lis, limit: n, hold: hold, open: map[string]int{}}
}

// MaxHeldConnections bounds the connections over their address's share held
// before they are closed.
const MaxHeldConnections = 4096

type perAddressListener struct {
	net.Listener
	limit int
	hold  time.Duration
	held  atomic.Int32
	mu    sync.Mutex
	open  map[string]int
}

// refuse closes a connection over its address's share, after hold while
// fewer than MaxHeldConnections are held.
func (l *perAddressListener) refuse(c net.Conn) {
	if l.hold <= 0 || l.held.Add(1) > MaxHeldConnections {
		if l.hold > 0 {
			l.held.Add(-1)
		}
		c.Close()
		return
	}
	time.AfterFunc(l.hold, func() {
		c.Close()
		l.held.Add(-1)
	})
}

func (l *perAddressListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr, ok := c.RemoteAddr().(*net.TCPAddr)
		if !ok {
			return c, nil
		}
		ip := addr.IP.String()
		l.mu.Lock()
		if l.open[ip] >= l.limit {
			l.mu.Unlock()
			l.refuse(c)
			continue
		}
		l.open[ip]++
		l.mu.Unlock()
		return &countedConn{Conn: c, release: func() { l.release(ip) }}, nil
	}
}

func (l *perAddressListener) release(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[ip]--; l.open[ip] <= 0 {
		delete(l.open, ip)
	}
}

// countedConn gives its address's slot back once, when closed.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
