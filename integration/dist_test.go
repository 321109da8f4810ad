//go:build dist

package integration

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// TestReleaseArtifacts takes the release directory `make dist` wrote (make
// test-dist runs both) as a user would: checks every file against
// SHA256SUMS, unpacks this machine's binary and serves with it, installs
// each client package from its artifact into a clean directory and runs the
// quick start of its README against that server, and renders the packaged
// chart. Everything says the version in VERSION.
func TestReleaseArtifacts(t *testing.T) {
	version := strings.TrimSpace(readFile(t, filepath.Join(repoRoot, "VERSION")))
	dist := filepath.Join(repoRoot, "dist", "ctxc-"+version)
	if _, err := os.Stat(dist); err != nil {
		t.Fatalf("no release directory: run `make dist` (make test-dist does): %v", err)
	}
	checkSums(t, dist)

	bin := filepath.Join(t.TempDir(), "ctxc")
	untar(t, filepath.Join(dist, "ctxc_"+version+"_linux_"+runtime.GOARCH+".tar.gz"), "ctxc", bin)
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), version) {
		t.Fatalf("ctxc version: %v %s, want it to say %s", err, out, version)
	}
	s := launch(t, launchOptions{binary: bin, args: []string{"--http-listen", "127.0.0.1:0"}})
	httpAddr := s.httpAddr(t)

	t.Run("typescript", func(t *testing.T) {
		dir := t.TempDir()
		npm := needProgram(t, "npm", "make deps")
		writeFile(t, filepath.Join(dir, "package.json"), `{"name": "quickstart", "private": true, "type": "module"}`)
		// The quick start uses LangChain.js, the package's optional peer.
		run(t, dir, npm, "install", "--no-audit", "--no-fund", "--loglevel=error", filepath.Join(dist, "ctxc-client-"+version+".tgz"), "@langchain/core@1")
		writeFile(t, filepath.Join(dir, "quickstart.mjs"), quickStart(t, "clients/typescript/README.md", "ts", s.addr, httpAddr))
		out := run(t, dir, needProgram(t, "node", "make deps"), "quickstart.mjs")
		if !regexp.MustCompile(`^\d+ \d+\n$`).MatchString(out) {
			t.Errorf("the quick start printed %q, want the messages to send and the tokens used", out)
		}
		var pkg struct{ Version string }
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "node_modules", "@ctxc", "client", "package.json"))), &pkg); err != nil || pkg.Version != version {
			t.Errorf("installed @ctxc/client %q (%v), want %s", pkg.Version, err, version)
		}
	})

	// docs/releases.md's commands for the wheel: a virtual environment that
	// sees Debian's python3-grpcio and python3-protobuf, so that pip fetches
	// nothing (PyPI may be out of reach); the sdist the same way, built with
	// Debian's setuptools (--no-build-isolation, as the guide says).
	wheel := "ctxc_client-" + version + "-py3-none-any.whl"
	pythonBlock := regexp.MustCompile("(?s)```console\n(/usr/bin/python3 -m venv .*?)```").FindStringSubmatch(readFile(t, filepath.Join(repoRoot, "docs", "releases.md")))
	for _, artifact := range []string{wheel, "ctxc-client-" + version + ".tar.gz"} {
		t.Run("python "+artifact, func(t *testing.T) {
			if pythonBlock == nil || !strings.Contains(pythonBlock[1], " ./"+wheel+"\n") {
				t.Fatalf("docs/releases.md has no console block that makes a venv and installs ./%s", wheel)
			}
			dir := t.TempDir()
			script := strings.ReplaceAll(pythonBlock[1], "./"+wheel, filepath.Join(dist, artifact))
			if artifact != wheel {
				script = strings.ReplaceAll(script, "pip install ", "pip install --no-build-isolation ")
			}
			if out := run(t, dir, "bash", "-e", "-c", script); !strings.HasSuffix(out, "\n"+version+"\n") {
				t.Errorf("docs/releases.md's commands printed\n%s\nwant the version %s last", out, version)
			}
			writeFile(t, filepath.Join(dir, "quickstart.py"), quickStart(t, "clients/python/README.md", "python", s.addr, httpAddr)+
				"import ctxc as _c\nassert _c.__version__ == "+`"`+version+`"`+", _c.__version__\n")
			out, err := exec.Command(filepath.Join(dir, "venv", "bin", "python"), filepath.Join(dir, "quickstart.py")).CombinedOutput()
			if err != nil || !regexp.MustCompile(`^\d+ \d+ \d+\n$`).Match(out) {
				t.Errorf("the quick start: %v\n%s", err, out)
			}
		})
	}

	t.Run("the archive's README", func(t *testing.T) { checkArchiveReadme(t, dist, version) })

	t.Run("php", func(t *testing.T) {
		dir := t.TempDir()
		// A Composer artifact repository: the release directory, Packagist off.
		writeFile(t, filepath.Join(dir, "composer.json"), `{"repositories": [{"type": "artifact", "url": "`+dist+`"}, {"packagist.org": false}], "require": {"ctxc/client": "`+version+`"}}`)
		cmd := exec.Command(needProgram(t, "composer", "make deps"), "install", "--no-interaction", "--no-progress", "--quiet")
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "COMPOSER_HOME="+filepath.Join(dir, ".composer"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("composer install: %v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "vendor", "ctxc", "client", "vendor")); err == nil {
			t.Error("the Composer archive carries the package's own vendor directory")
		}
		writeFile(t, filepath.Join(dir, "quickstart.php"), "<?php\nrequire __DIR__ . '/vendor/autoload.php';\n"+quickStart(t, "clients/php/README.md", "php", s.addr, httpAddr))
		out := run(t, dir, needProgram(t, "php", "make deps"), "quickstart.php")
		if !regexp.MustCompile(`^\d+ messages, \d+ tokens\n$`).MatchString(out) {
			t.Errorf("the quick start printed %q", out)
		}
	})

	t.Run("helm chart", func(t *testing.T) {
		helm := filepath.Join(repoRoot, "bin", "helm")
		chart := filepath.Join(dist, "ctxc-"+version+".tgz")
		run(t, repoRoot, helm, "lint", chart)
		out := run(t, repoRoot, helm, "show", "chart", chart)
		if !strings.Contains(out, "appVersion: "+version) && !strings.Contains(out, `appVersion: "`+version+`"`) {
			t.Errorf("the chart's appVersion is not %s:\n%s", version, out)
		}
		// The Kubernetes release deploy/go.mod's k8s.io/api is of, as make test-deploy renders for.
		api := regexp.MustCompile(`(?m)^\s*k8s\.io/api v0\.(\d+\.\d+)\s*$`).FindStringSubmatch(readFile(t, filepath.Join(repoRoot, "deploy", "go.mod")))
		if api == nil {
			t.Fatal("deploy/go.mod names no k8s.io/api")
		}
		if rendered := run(t, repoRoot, helm, "template", "ctxc", chart, "--kube-version", "1."+api[1]); !strings.Contains(rendered, ":"+version) {
			t.Errorf("the rendered chart runs no image tagged %s", version)
		}
	})

	t.Run("container image", func(t *testing.T) { checkImage(t, dist, version, bin) })

	t.Run("sbom", func(t *testing.T) {
		var bom struct {
			BOMFormat  string `json:"bomFormat"`
			Components []struct {
				Type, Name, Version, Purl string
				Hashes                    []struct{ Alg, Content string }
			} `json:"components"`
			Dependencies []struct {
				Ref       string   `json:"ref"`
				DependsOn []string `json:"dependsOn"`
			} `json:"dependencies"`
		}
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dist, "ctxc_"+version+".cdx.json"))), &bom); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range bom.Components {
			names = append(names, c.Name)
		}
		for _, dep := range []string{"google.golang.org/grpc", "google.golang.org/protobuf", "github.com/pkoukk/tiktoken-go", "go.opentelemetry.io/otel"} {
			if !slices.Contains(names, dep) {
				t.Errorf("the bill of materials (%s) does not list %s", bom.BOMFormat, dep)
			}
		}
		// The image, by the digest of its index.
		sum := sha256.Sum256([]byte(readFile(t, filepath.Join(dist, "ctxc-"+version+"-image.index.json"))))
		digest := hex.EncodeToString(sum[:])
		var image string
		for _, c := range bom.Components {
			if c.Type == "container" && c.Version == version && len(c.Hashes) == 1 && c.Hashes[0].Alg == "SHA-256" && c.Hashes[0].Content == digest &&
				strings.HasPrefix(c.Purl, "pkg:oci/ctxc@sha256%3A"+digest+"?") {
				image = c.Purl
			}
		}
		if image == "" {
			t.Errorf("the bill of materials lists no container %s whose SHA-256 is the image's digest %s", version, digest)
		}
		found := false
		for _, d := range bom.Dependencies {
			found = found || (d.Ref == image && len(d.DependsOn) > 0)
		}
		if image != "" && !found {
			t.Errorf("the bill of materials does not say what the image %s holds", image)
		}
	})
}

// checkSums checks that SHA256SUMS lists every other file of dir, with its
// digest.
func checkSums(t *testing.T, dir string) {
	t.Helper()
	listed := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, filepath.Join(dir, "SHA256SUMS"))), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", line)
		}
		listed[name] = sum
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "SHA256SUMS" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); listed[e.Name()] != got {
			t.Errorf("%s: SHA256SUMS says %q, the file's digest is %s", e.Name(), listed[e.Name()], got)
		}
		delete(listed, e.Name())
	}
	for name := range listed {
		t.Errorf("SHA256SUMS lists %s, which is not in the release", name)
	}
}

// untar writes the file name of the gzipped tar archive to dst.
func untar(t *testing.T, archive, name, dst string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s holds no %s: %v", archive, name, err)
		}
		if h.Name != name {
			continue
		}
		out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, tr); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		return
	}
}

// quickStart is the first ```lang block of a client's README, with the
// README's addresses replaced by the test server's.
func quickStart(t *testing.T, readme, lang, grpcAddr, httpAddr string) string {
	t.Helper()
	_, rest, ok := strings.Cut(readFile(t, filepath.Join(repoRoot, readme)), "```"+lang+"\n")
	if !ok {
		t.Fatalf("%s has no ```%s block", readme, lang)
	}
	code, _, _ := strings.Cut(rest, "```")
	code = strings.ReplaceAll(code, readmeAddr, grpcAddr)
	return strings.ReplaceAll(code, readmeHTTPAddr, httpAddr)
}

func run(t *testing.T, dir, program string, args ...string) string {
	t.Helper()
	cmd := exec.Command(program, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", program, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkImage takes the release's container image as a registry would get
// it: its index (whose SHA-256, in SHA256SUMS, is the image's digest) is the
// one the archive's layout names with the chart's image; each platform runs
// as a non-root user with the Dockerfile's entrypoint and labels saying
// VERSION and the commit; and this machine's platform, unpacked, holds the
// released binary, which says VERSION, serves with the image's environment
// and answers the image's health check.
func checkImage(t *testing.T, dist, version, released string) {
	indexFile := "ctxc-" + version + "-image.index.json"
	raw, err := os.ReadFile(filepath.Join(dist, indexFile))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	if sums := readFile(t, filepath.Join(dist, "SHA256SUMS")); !strings.Contains(sums, digest[len("sha256:"):]+"  "+indexFile+"\n") {
		t.Errorf("SHA256SUMS does not give the image's digest %s for %s:\n%s", digest, indexFile, sums)
	}

	root := t.TempDir()
	run(t, root, "tar", "-xf", filepath.Join(dist, "ctxc-"+version+"-image.oci.tar"))
	top, err := layout.ImageIndexFromPath(root)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries.Manifests) != 1 || entries.Manifests[0].Digest.String() != digest {
		t.Fatalf("the archive's index.json lists %+v, want the image index %s alone", entries.Manifests, digest)
	}
	// The name the chart runs by default (helm template, as the chart subtest renders it).
	name := entries.Manifests[0].Annotations["io.containerd.image.name"]
	if tag := entries.Manifests[0].Annotations["org.opencontainers.image.ref.name"]; tag != version || name == "" || !strings.HasSuffix(name, ":"+version) {
		t.Errorf("the archive names the image %q, tag %q; want it tagged %s", name, tag, version)
	}
	api := regexp.MustCompile(`(?m)^\s*k8s\.io/api v0\.(\d+\.\d+)\s*$`).FindStringSubmatch(readFile(t, filepath.Join(repoRoot, "deploy", "go.mod")))
	rendered := run(t, repoRoot, filepath.Join(repoRoot, "bin", "helm"), "template", "ctxc", filepath.Join(dist, "ctxc-"+version+".tgz"), "--kube-version", "1."+api[1])
	if !strings.Contains(rendered, "image: "+name+"\n") {
		t.Errorf("the chart does not run the release's image %s by default", name)
	}
	idx, err := top.ImageIndex(entries.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Index(idx); err != nil {
		t.Fatalf("the image does not hold together: %v", err)
	}

	// What the released binary says it was built from.
	out, err := exec.Command(released, "version").CombinedOutput()
	commit := regexp.MustCompile(`\(commit (\S+)\)`).FindSubmatch(out)
	if err != nil || commit == nil {
		t.Fatalf("ctxc version: %v %s: want the commit", err, out)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	var native v1.Image
	for _, d := range m.Manifests {
		platforms = append(platforms, d.Platform.String())
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		c := cf.Config
		if uid, _, _ := strings.Cut(c.User, ":"); uid == "" || uid == "0" || uid == "root" {
			t.Errorf("%s runs as %q, want a non-root user", d.Platform, c.User)
		}
		if !slices.Equal(c.Entrypoint, []string{"/ctxc"}) || !slices.Equal(c.Cmd, []string{"serve"}) || !slices.Contains(c.Env, "CTXC_LISTEN=0.0.0.0:50051") {
			t.Errorf("%s: entrypoint %q, cmd %q, env %q: want the Dockerfile's", d.Platform, c.Entrypoint, c.Cmd, c.Env)
		}
		for key, want := range map[string]string{"version": version, "revision": string(commit[1])} {
			if got := c.Labels["org.opencontainers.image."+key]; got != want {
				t.Errorf("%s: label org.opencontainers.image.%s is %q, want %q", d.Platform, key, got, want)
			}
		}
		if d.Platform.OS == "linux" && d.Platform.Architecture == runtime.GOARCH {
			native = img
		}
	}
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64/v8"}) {
		t.Errorf("the index holds %q, want linux/amd64 and linux/arm64/v8", platforms)
	}
	if native == nil {
		t.Fatalf("no image for linux/%s to run here", runtime.GOARCH)
	}

	fs := unpackImage(t, native)
	binary := filepath.Join(fs, "ctxc")
	if want, got := readFile(t, released), readFile(t, binary); got != want {
		t.Errorf("the image's /ctxc (%d bytes) is not the released binary (%d bytes)", len(got), len(want))
	}
	passwd := readFile(t, filepath.Join(fs, "etc", "passwd"))
	cf, err := native.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	uid, _, _ := strings.Cut(cf.Config.User, ":")
	if !regexp.MustCompile(`(?m)^[a-z]+:x:` + regexp.QuoteMeta(uid) + `:`).MatchString(passwd) {
		t.Errorf("/etc/passwd has no user %s:\n%s", uid, passwd)
	}
	if pool := x509.NewCertPool(); !pool.AppendCertsFromPEM([]byte(readFile(t, filepath.Join(fs, "etc", "ssl", "certs", "ca-certificates.crt")))) {
		t.Error("the image's CA bundle holds no certificate")
	}
	if out, err := exec.Command(binary, "version").CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "ctxc "+version+" (commit "+string(commit[1])+")") {
		t.Errorf("the image's ctxc version: %v %q, want ctxc %s (commit %s)", err, out, version, commit[1])
	}

	// Serve with the image's environment (on a loopback port), then its
	// health check, as the runtime would run it, says healthy.
	env := slices.Clone(cf.Config.Env)
	addr := freeAddr(t)
	for i, kv := range env {
		if strings.HasPrefix(kv, "CTXC_LISTEN=") {
			env[i] = "CTXC_LISTEN=" + addr
		}
	}
	launch(t, launchOptions{binary: binary, env: env, noListen: true})
	hc := cf.Config.Healthcheck
	if hc == nil || len(hc.Test) < 2 || hc.Test[0] != "CMD" || hc.Test[1] != "/ctxc" {
		t.Fatalf("health check %+v, want CMD /ctxc ...", hc)
	}
	check := exec.Command(binary, hc.Test[2:]...)
	check.Env = append(os.Environ(), env...)
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("the image's health check %q: %v\n%s", hc.Test, err, out)
	}
}

// unpackImage writes the image's file system (its layers applied in order)
// to a new directory.
func unpackImage(t *testing.T, img v1.Image) string {
	t.Helper()
	dir := t.TempDir()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return dir
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, filepath.FromSlash(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			var data []byte
			if data, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(path, data, h.FileInfo().Mode().Perm())
			}
		default:
			t.Errorf("%s: unexpected entry type %c", h.Name, h.Typeflag)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// compiledState is the start of the compiled state the archive's README's
// curl prints. protojson varies its spaces from build to build on purpose,
// so any white space may stand between tokens.
var compiledState = regexp.MustCompile(`\{\s*"messages"\s*:\s*\[\s*\{\s*"id"\s*:\s*"ctxc-system"\s*,\s*"role"\s*:\s*"ROLE_SYSTEM"\s*,\s*"parts"\s*:\s*\[\s*\{\s*"text"\s*:\s*"You are terse."\s*\}\s*\]\s*\}\s*,\s*\{\s*"id"\s*:\s*"u1"\s*,\s*"role"\s*:\s*"ROLE_USER"`)

// checkArchiveReadme runs the README the binary's archive ships as a user
// with only the unpacked archive would: in the directory it was unpacked
// into, the server as its serve command starts it (on ports the kernel
// picks, which the other commands then call), every other command as
// written; what they print is what the README says they print. The guides
// it names are in docs/.
func checkArchiveReadme(t *testing.T, dist, version string) {
	dir := t.TempDir()
	archive := filepath.Join(dist, "ctxc_"+version+"_linux_"+runtime.GOARCH+".tar.gz")
	untar(t, archive, "ctxc", filepath.Join(dir, "ctxc"))
	untar(t, archive, "README.md", filepath.Join(dir, "README.md"))
	readme := readFile(t, filepath.Join(dir, "README.md"))
	if !strings.HasPrefix(readme, "# ctxc "+version+"\n") || !strings.Contains(readme, "binary for linux/"+runtime.GOARCH+" ") {
		t.Errorf("the archive's README does not name version %s and linux/%s:\n%s", version, runtime.GOARCH, readme)
	}
	if left := regexp.MustCompile(`@[A-Z]+@`).FindAllString(readme, -1); left != nil {
		t.Errorf("the archive's README keeps placeholders %v", left)
	}
	var out strings.Builder
	replace := strings.NewReplacer()
	for _, block := range regexp.MustCompile("(?s)```console\n(.*?)```").FindAllStringSubmatch(readme, -1) {
		if strings.HasPrefix(block[1], "./ctxc serve ") {
			args := strings.Fields(strings.ReplaceAll(block[1], readmeHTTPAddr, "127.0.0.1:0"))
			if len(args) < 2 || strings.Contains(block[1], "\n./") {
				t.Fatalf("the serve block holds more than its command:\n%s", block[1])
			}
			s := launch(t, launchOptions{binary: filepath.Join(dir, "ctxc"), args: args[2:]})
			replace = strings.NewReplacer(readmeAddr, s.addr, readmeHTTPAddr, s.httpAddr(t))
			continue
		}
		out.WriteString(run(t, dir, "bash", "-e", "-c", replace.Replace(block[1])))
	}
	got := out.String()
	// ctxc version; the eval table, budget-aware keeping more of the
	// planted facts than pragmatic's trimming; health; the compiled state.
	facts := map[string]float64{}
	for _, m := range regexp.MustCompile(`(?m)^\| (budget-aware|pragmatic) \| 8,000 \| \d+ \| [\d.]+ \| ([\d.]+) \|`).FindAllStringSubmatch(got, -1) {
		facts[m[1]], _ = strconv.ParseFloat(m[2], 64)
	}
	if !strings.Contains(got, "ctxc "+version) || len(facts) != 2 || facts["budget-aware"] <= facts["pragmatic"] || !strings.Contains(got, "SERVING\n") ||
		!compiledState.MatchString(got) {
		t.Errorf("the archive's README's commands printed (facts kept %v):\n%s", facts, got)
	}
	for _, m := range regexp.MustCompile("`([a-z-]+\\.md)`").FindAllStringSubmatch(readme, -1) {
		if _, err := os.Stat(filepath.Join(repoRoot, "docs", m[1])); err != nil {
			t.Errorf("the archive's README names the guide docs/%s: %v", m[1], err)
		}
	}
}
