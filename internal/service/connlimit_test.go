package service

import (
	"net"
	"testing"
	"time"
)

// TestLimitPerAddress: a third connection from an address that holds two
// never reaches the server: it is held unread for the hold, then closed;
// once one of the two closes, the next is accepted; another address is not
// affected.
func TestLimitPerAddress(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const hold = 300 * time.Millisecond
	lis := LimitPerAddress(raw, 2, hold)
	defer lis.Close()
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func(from string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	closedByServer := func(c net.Conn) bool {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err := c.Read(make([]byte, 1))
		return err != nil && !isTimeout(err)
	}
	first, second := dial("127.0.0.1"), dial("127.0.0.1")
	a1, a2 := <-accepted, <-accepted
	third := dial("127.0.0.1")
	_ = third.SetReadDeadline(time.Now().Add(hold / 3))
	if _, err := third.Read(make([]byte, 1)); !isTimeout(err) {
		t.Errorf("a third connection from the same address was closed at once (%v), want it held", err)
	}
	if !closedByServer(third) {
		t.Error("a third connection from the same address was kept")
	}
	select {
	case <-accepted:
		t.Error("the third connection reached the server")
	default:
	}
	other := dial("127.0.0.2")
	<-accepted // another address has slots of its own
	a1.Close()
	first.Close()
	fourth := dial("127.0.0.1")
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(5 * time.Second):
		t.Error("a connection after one of the two closed was not accepted")
	}
	for _, c := range []net.Conn{second, a2, other, fourth} {
		c.Close()
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
