//go:build helmcli

package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// These tests run the helm CLI itself, ./bin/helm (make helm builds it from
// deploy/go.mod's helm, stamped): `make test-helm-cli`, which make test-dist
// runs, as make dist needs that helm too. The chart's own checks render and
// lint with helm's packages (helm_test.go) and need no binary.

// helmBinary is CTXC_HELM (set by the Makefile), else bin/helm. Without it
// the test fails under make test-helm-cli and in CI (CTXC_REQUIRE_TOOLS=1,
// CI=true), and is skipped elsewhere, as the main module's tests do
// (internal/testtools, which this module cannot import).
func helmBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("CTXC_HELM")
	if bin == "" {
		bin = filepath.Join(repoRoot, "bin", "helm")
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") == "true" || os.Getenv("CTXC_REQUIRE_TOOLS") == "1" {
			t.Fatalf("helm not found at %s: run `make helm` or set CTXC_HELM (`make test-helm-cli` does)", bin)
		}
		t.Skipf("skipped: helm not found at %s: run `make helm` or set CTXC_HELM (`make test-helm-cli` does, and fails instead of skipping)", bin)
	}
	return bin
}

// runHelm runs the pinned helm in dir with exactly args.
func runHelm(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(helmBinary(t), args...)
	cmd.Dir = dir
	// No user's helm configuration or repositories: only the chart's own files.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil {
		return out.String() + errOut.String(), err
	}
	return out.String(), nil
}

// TestHelmDefaultsToThePinnedKubernetes: make helm stamps the helm it
// builds with the Kubernetes release of deploy/go.mod's k8s.io/client-go
// (v0.X.Y is 1.X), as helm's own release builds are, so that
// docs/deploying.md's `./bin/helm template` renders the chart with no
// --kube-version (unstamped, helm assumes 1.20, which the chart's
// kubeVersion refuses).
func TestHelmDefaultsToThePinnedKubernetes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/client-go v0\.(\d+)\.\d+\b`).FindSubmatch(data)
	if m == nil {
		t.Fatal("deploy/go.mod does not require k8s.io/client-go")
	}
	want := "v1." + string(m[1]) + ".0"

	// A chart whose one object says which release helm renders for.
	probe := t.TempDir()
	for name, text := range map[string]string{
		"Chart.yaml":             "apiVersion: v2\nname: probe\nversion: 0.1.0\n",
		"templates/version.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(probe, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(probe, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := runHelm(t, repoRoot, "template", "probe", probe)
	if err != nil {
		t.Fatalf("helm template of a probe chart: %v\n%s", err, out)
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal([]byte(strings.TrimPrefix(out, "---\n")), &cm); err != nil {
		t.Fatalf("the probe chart rendered %q: %v", out, err)
	}
	if got := cm.Data["kubeVersion"]; got != want {
		t.Errorf("helm renders for Kubernetes %s by default, want %s (deploy/go.mod's k8s.io/client-go); a helm built before make helm stamped it? rm bin/helm && make helm", got, want)
	}

	// docs/deploying.md's command, as written, from the repository root.
	guide, err := os.ReadFile(filepath.Join(repoRoot, "docs", "deploying.md"))
	if err != nil {
		t.Fatal(err)
	}
	command := regexp.MustCompile(`(?m)^\./bin/helm (template .*)$`).FindSubmatch(guide)
	if command == nil {
		t.Fatal("docs/deploying.md has no ./bin/helm template command")
	}
	out, err = runHelm(t, repoRoot, strings.Fields(string(command[1]))...)
	if err != nil {
		t.Fatalf("docs/deploying.md's ./bin/helm %s: %v\n%s", command[1], err, out)
	}
	if diff := cmp.Diff(kinds(render(t, nil)), kinds(decodeStrictly(t, string(command[0]), []byte(out)))); diff != "" {
		t.Errorf("docs/deploying.md's ./bin/helm %s renders other objects than with --kube-version %s (-want +got):\n%s", command[1], kubeVersion, diff)
	}
	if out, err := runHelm(t, repoRoot, "lint", "--strict", "deploy/helm/ctxc"); err != nil {
		t.Errorf("helm lint --strict with its default Kubernetes release: %v\n%s", err, out)
	}
}

// authToken is the token the chart draws at random for its Secret, the one
// difference between two renders of the same values.
var authToken = regexp.MustCompile(`(?m)^(\s+default )[A-Za-z0-9]{48}$`)

// TestHelmCLIRendersAsTheLibrary: the helm CLI prints, for the default values
// and each example values file, what helmTemplate returns for them (but for
// the random token), and fails on the unsafe values with helmTemplate's
// error, so that the checks of make test, which render with helm's packages,
// check what `helm template` and `helm install` make.
func TestHelmCLIRendersAsTheLibrary(t *testing.T) {
	sets := map[string][]string{"default": nil}
	for _, f := range exampleValues(t) {
		sets[filepath.Base(f)] = []string{f}
	}
	for name, files := range sets {
		t.Run(name, func(t *testing.T) {
			want, err := helmTemplate("ctxc", chartDir, "agents", pinnedKube(t), files, nil)
			if err != nil {
				t.Fatalf("helm %s: %v", renderArgs(files), err)
			}
			args := append(strings.Fields(renderArgs(files)), "--kube-version", kubeVersion)
			got, err := runHelm(t, filepath.Join(repoRoot, "deploy"), args...)
			if err != nil {
				t.Fatalf("./bin/helm %s: %v\n%s", strings.Join(args, " "), err, got)
			}
			mask := func(s string) string { return authToken.ReplaceAllString(s, "${1}<token>") }
			if diff := cmp.Diff(mask(want), mask(got)); diff != "" {
				t.Errorf("./bin/helm %s prints other than helmTemplate (-library +CLI):\n%s", strings.Join(args, " "), diff)
			}
		})
	}
	for _, tc := range unsafeValues() {
		_, want := helmTemplate("ctxc", chartDir, "default", pinnedKube(t), nil, tc.set)
		args := []string{"template", "ctxc", chartDir, "--kube-version", kubeVersion}
		for _, s := range tc.set {
			args = append(args, "--set", s)
		}
		out, err := runHelm(t, filepath.Join(repoRoot, "deploy"), args...)
		if err == nil || want == nil || !strings.Contains(out, want.Error()) {
			t.Errorf("./bin/helm %s: %v, want a failure saying helmTemplate's %v:\n%s", strings.Join(args, " "), err, want, out)
		}
	}
}
