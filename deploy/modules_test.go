package deploy

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestSharedModulesAtTheServiceVersions: every module whose packages both
// these tests and the service (its binary, its tests, the grpcurl its
// commands run) compile is at one version in both go.mod files. A module at
// two versions is compiled twice on a cold build cache, and make test builds
// the service just before it runs these tests (protobuf, x/net, x/sys and
// x/text at other versions cost about 20 s of CPU).
func TestSharedModulesAtTheServiceVersions(t *testing.T) {
	t.Parallel()
	service := compiledModules(t, repoRoot, "-tags", "integration,grpcnotrace", "./...", "github.com/fullstorydev/grpcurl/cmd/grpcurl")
	here := compiledModules(t, ".", "./...")
	if len(service) < 20 || len(here) < 20 {
		t.Fatalf("go list found %d modules in the service's build and %d in deploy's: not the builds", len(service), len(here))
	}
	shared := 0
	for path, version := range here {
		other, ok := service[path]
		if !ok {
			continue
		}
		shared++
		if other != version {
			t.Errorf("%s is %s in deploy/go.mod and %s in go.mod: make test compiles it twice (go get %s@%s in deploy/)", path, version, other, path, other)
		}
	}
	if shared == 0 {
		t.Error("no module is compiled by both builds: the lists are not what this test reads")
	}
}

// compiledModules lists the modules (path to version) whose packages go
// test compiles for patterns in dir, as make test builds them.
func compiledModules(t *testing.T, dir string, args ...string) map[string]string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-deps", "-test", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{end}}"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v\n%s", dir, err, stderr.String())
	}
	modules := map[string]string{}
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		// The main module has no version: it is not shared.
		if path, version, ok := strings.Cut(sc.Text(), " "); ok && version != "" {
			modules[path] = version
		}
	}
	return modules
}
