package server

import (
	"net"
	"sync"
)

// One client must not take every connection slot: a thousand connections
// that never authenticate (health needs no token) or idle sockets that a
// client reopens as the handshake timeout closes them would lock everyone
// else out. So each remote address holds at most a share of the slots; a
// connection beyond its address's share is closed as it is accepted, and
// the slot stays free for others.

// LimitPerAddress wraps lis so that each remote IP address has at most n
// connections open at once; n <= 0 leaves lis as it is. Unix-socket
// connections, which have no address, are not limited.
func LimitPerAddress(lis net.Listener, n int) net.Listener {
	if n <= 0 {
		return lis
	}
	return &perAddressListener{Listener: lis, limit: n, open: map[string]int{}}
}

type perAddressListener struct {
	net.Listener
	limit int
	mu    sync.Mutex
	open  map[string]int
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
			c.Close()
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
