package client_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/contextcompiler/ctxc/client"
)

// Every client package is released with the service: each says the version in
// the repository's VERSION file.
func TestPackagesCarryTheServiceVersion(t *testing.T) {
	root := ".."
	want := strings.TrimSpace(read(t, filepath.Join(root, "VERSION")))
	if client.Version != want {
		t.Errorf("client.Version = %q, VERSION says %q", client.Version, want)
	}
	tests := []struct {
		file    string
		pattern string
	}{
		{"clients/typescript/package.json", `(?m)^  "version": "([^"]+)"`},
		{"clients/typescript/src/version.ts", `VERSION = "([^"]+)"`},
		{"clients/python/pyproject.toml", `(?m)^version = "([^"]+)"`},
		{"clients/python/src/ctxc/_version.py", `__version__ = "([^"]+)"`},
		{"clients/php/src/Client.php", `VERSION = '([^']+)'`},
		// A Composer artifact repository (the release's zip) reads it here.
		{"clients/php/composer.json", `(?m)^    "version": "([^"]+)"`},
		{"deploy/helm/ctxc/Chart.yaml", `(?m)^appVersion: "([^"]+)"`},
	}
	for _, tt := range tests {
		m := regexp.MustCompile(tt.pattern).FindStringSubmatch(read(t, filepath.Join(root, tt.file)))
		if m == nil {
			t.Errorf("%s: no version matching %s", tt.file, tt.pattern)
		} else if m[1] != want {
			t.Errorf("%s says %q, VERSION says %q", tt.file, m[1], want)
		}
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
