// Package redistest starts a real redis-server for tests (the summary
// cache's and the integration tests'). Nothing here is used by the server.
package redistest

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/contextcompiler/ctxc/internal/testtools"
)

// Server is a real redis-server on a free loopback port, for one test.
type Server struct {
	cmd *exec.Cmd
	URL string
}

// Start starts redis-server without persistence. Without the binary the
// test fails under `make test` and in CI, and is skipped elsewhere
// (testtools.Missing).
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		testtools.Missing(t, "redis-server not found", "make deps")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &Server{cmd: cmd, URL: fmt.Sprintf("redis://127.0.0.1:%d/0", port)}
	t.Cleanup(s.Kill)
	client := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port)})
	defer client.Close()
	for i := 0; ; i++ {
		if client.Ping(context.Background()).Err() == nil {
			return s
		}
		if i == 200 {
			t.Fatal("redis-server did not answer PING")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Kill stops the server and waits for it to be gone.
func (s *Server) Kill() {
	if s.cmd.ProcessState == nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
}
