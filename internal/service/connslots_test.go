package service

import (
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

// accepted dials l's address and returns the connection Accept gave for it,
// or nil when Accept did not return within wait.
func accepted(t *testing.T, l *slotListener, wait time.Duration) (client net.Conn, server *slotConn) {
	t.Helper()
	client, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	got := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- nil
			return
		}
		got <- c
	}()
	select {
	case c := <-got:
		if c == nil {
			return client, nil
		}
		t.Cleanup(func() { c.Close() })
		return client, c.(*slotConn)
	case <-time.After(wait):
		t.Cleanup(func() { l.Close(); <-got })
		return client, nil
	}
}

// closedByServer reports whether the server closed the client's connection.
func closedByServer(t *testing.T, client net.Conn) bool {
	t.Helper()
	client.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err := client.Read(make([]byte, 1))
	return err == io.EOF
}

// When every slot is taken, a newcomer takes the slot of the oldest
// connection that has made no authenticated call; one that has keeps it;
// when all have, the newcomer waits.
func TestUnauthenticatedConnectionsGoFirst(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	l := limitConnections(lis, 2, slog.New(slog.NewTextHandler(logs, nil)))
	defer l.Close()

	firstClient, first := accepted(t, l, 5*time.Second)
	secondClient, second := accepted(t, l, 5*time.Second)
	if first == nil || second == nil {
		t.Fatal("two connections within two slots were not accepted")
	}
	first.prove()
	// Full: the third takes the slot of the second, which never proved itself.
	if _, third := accepted(t, l, 5*time.Second); third == nil {
		t.Fatal("a newcomer waited although an unauthenticated connection held a slot")
	} else {
		third.prove()
	}
	if !closedByServer(t, secondClient) {
		t.Error("the unauthenticated connection was not the one closed")
	}
	firstClient.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := firstClient.Read(make([]byte, 1)); err == io.EOF {
		t.Error("the authenticated connection was closed for a newcomer")
	}
	if got := strings.Count(logs.String(), "connection closed to make room"); got != 1 {
		t.Errorf("%d evictions logged, want 1:\n%s", got, logs.String())
	}
	// Every slot is held by an authenticated connection: the newcomer waits.
	if _, fourth := accepted(t, l, 300*time.Millisecond); fourth != nil {
		t.Error("a newcomer was accepted over two authenticated connections in two slots")
	}
}

// A waiting newcomer is accepted as soon as a slot frees.
func TestNewcomerTakesAFreedSlot(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	l := limitConnections(lis, 1, slog.New(slog.NewTextHandler(logs, nil)))
	defer l.Close()
	_, first := accepted(t, l, 5*time.Second)
	if first == nil {
		t.Fatal("not accepted")
	}
	first.prove()
	go func() {
		time.Sleep(100 * time.Millisecond)
		first.Close()
	}()
	if _, second := accepted(t, l, 5*time.Second); second == nil {
		t.Error("the newcomer was not accepted once the slot freed")
	}
	if strings.Contains(logs.String(), "connection closed to make room") {
		t.Errorf("a connection was evicted:\n%s", logs.String())
	}
}
