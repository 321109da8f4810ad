//go:build integration

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOneVersionEverywhere: the release in VERSION is what `ctxc version`
// prints (built by `make build`, as TestMain builds it), what each client
// package says it is, and the Helm chart's appVersion.
func TestOneVersionEverywhere(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(raw))
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(want) {
		t.Fatalf("VERSION holds %q, want a release such as 0.1.0", want)
	}
	out, err := exec.Command(ctxcBinary, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "ctxc "+want+" ") {
		t.Errorf("ctxc version prints %q, want it to begin with \"ctxc %s \"", out, want)
	}
	for _, c := range []struct{ file, pattern string }{
		{"clients/typescript/package.json", `"version": "([^"]+)"`},
		{"clients/typescript/src/version.ts", `VERSION = "([^"]+)"`},
		{"clients/python/pyproject.toml", `(?m)^version = "([^"]+)"`},
		{"clients/python/src/ctxc/_version.py", `__version__ = "([^"]+)"`},
		{"clients/php/src/Client.php", `const VERSION = '([^']+)'`},
		{"deploy/helm/ctxc/Chart.yaml", `(?m)^appVersion: "([^"]+)"`},
	} {
		text, err := os.ReadFile(filepath.Join(repoRoot, c.file))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(c.pattern).FindSubmatch(text)
		if m == nil {
			t.Errorf("%s: no version found (%s)", c.file, c.pattern)
			continue
		}
		if got := string(m[1]); got != want {
			t.Errorf("%s says %s, VERSION %s", c.file, got, want)
		}
	}
}
