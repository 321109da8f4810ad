package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// specifiedLayout is the top level the service was specified with: the
// module, the protos and their generated code, the binary, the public Go API
// (server: the service as a library; policies: the policy contract and the
// built-in policies), the container build, the make targets and the tests
// against the real binary.
var specifiedLayout = []string{
	"go.mod", "go.sum", "buf.yaml", "buf.gen.yaml", "proto/", "gen/", "cmd/",
	"server/", "policies/", "Dockerfile", "Makefile", "integration/",
}

// TestSpecifiedLayout: the twelve entries are there, and server and
// policies are Go packages outside internal/, so another module can import
// them.
func TestSpecifiedLayout(t *testing.T) {
	for _, entry := range specifiedLayout {
		info, err := os.Stat("../../" + strings.TrimSuffix(entry, "/"))
		if err != nil {
			t.Errorf("top-level %s: %v", entry, err)
			continue
		}
		if dir := strings.HasSuffix(entry, "/"); info.IsDir() != dir {
			t.Errorf("top-level %s: directory %v, want %v", entry, info.IsDir(), dir)
		}
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go list needs the go command: %v", err)
	}
	out, err := exec.Command(goTool, "list", "../../server", "../../policies", "../../policies/...").Output()
	if err != nil {
		t.Fatalf("go list server policies: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 10 {
		t.Fatalf("go list server policies/... listed %q: want server, policies and its built-in policies", pkgs)
	}
	for _, pkg := range pkgs {
		if strings.Contains(pkg, "/internal/") || !strings.HasPrefix(pkg, "github.com/contextcompiler/ctxc/") {
			t.Errorf("%s: the public API must not be under internal/", pkg)
		}
	}
}
