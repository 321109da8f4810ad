//go:build integration

package integration

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPHPClient runs the PHP example, plain HTTP/JSON, against the real
// server's HTTP port: a compile, a Route session and a bad request.
func TestPHPClient(t *testing.T) {
	t.Parallel()
	php := needProgram(t, "php", "make deps")
	s := startServer(t, "--http-listen", "127.0.0.1:0")
	cmd := exec.Command(php, filepath.Join(repoRoot, "examples", "clients", "php", "compile.php"), "http://"+s.httpAddr(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("compile.php: %v\n%s\nserver log:\n%s", err, out, s.logs)
	}
	if !strings.Contains(string(out), "php client: ok") {
		t.Fatalf("compile.php printed %q", out)
	}
}
