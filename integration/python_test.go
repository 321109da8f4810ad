package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pythonClient finds a Python that imports Debian's grpcio and the stubs that
// `make python-stubs` generates; a missing one fails the test.
func pythonClient(t *testing.T) (python, stubs string) {
	t.Helper()
	stubs = os.Getenv("CTXC_PYTHON_STUBS")
	if stubs == "" {
		stubs = filepath.Join(repoRoot, "build", "python")
	}
	missing := func(why string) { t.Fatalf("%s (`make test` does)", why) }
	if _, err := os.Stat(filepath.Join(stubs, "ctxc", "v1", "compiler_service_pb2_grpc.py")); err != nil {
		missing("Python stubs not generated: run `make python-stubs`")
	}
	// Debian's python3-grpcio lives with Debian's interpreter, which may not be
	// the first python3 on PATH.
	for _, candidate := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(candidate, "-c", "import grpc, google.protobuf").Run() == nil {
			return candidate, stubs
		}
	}
	missing("no python3 with grpcio: run `make deps`")
	return "", ""
}

// TestPythonClients runs the Python examples against the real server: the
// ten-line sidecar call and a whole session kept as a state blob.
func TestPythonClients(t *testing.T) {
	python, stubs := pythonClient(t)
	s := startServer(t)
	for _, script := range []string{"compile.py", "session.py", "own_log.py"} {
		t.Run(script, func(t *testing.T) {
			cmd := exec.Command(python, filepath.Join(repoRoot, "examples", "clients", "python", script), s.addr)
			cmd.Env = append(os.Environ(), "PYTHONPATH="+stubs)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", script, err, out)
			}
			if !strings.Contains(string(out), "tokens used") && !strings.Contains(string(out), "session: ok") && !strings.Contains(string(out), "own log: ok") {
				t.Fatalf("%s printed %q", script, out)
			}
		})
	}
}
