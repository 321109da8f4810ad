package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// phpBinary finds php-cli. Outside CI a missing one skips; in CI it fails.
func phpBinary(t *testing.T) string {
	t.Helper()
	php, err := exec.LookPath("php")
	if err == nil {
		return php
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("php not found (CI must not skip the PHP client test; .ci/run installs php-cli)")
	}
	t.Skip("php not found: apt-get install php-cli")
	return ""
}

// TestPHPClient runs the PHP example, plain HTTP/JSON, against the real
// server's HTTP port: a compile, a Route session and a bad request.
func TestPHPClient(t *testing.T) {
	php := phpBinary(t)
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
