package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"io"
	"maps"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// testCA is a PEM bundle of one self-signed certificate.
func testCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test root"}, NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<32, 0), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// testSpec is a spec of two platforms whose binaries are a few bytes each.
func testSpec(t *testing.T) spec {
	t.Helper()
	return spec{
		version:    "1.2.3",
		commit:     "abc1234",
		created:    time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC),
		repository: "ghcr.io/example/ctxc",
		source:     "https://github.com/example/ctxc",
		licenses:   "Apache-2.0",
		caCerts:    testCA(t),
		binaries: []platformBinary{
			{platform: v1.Platform{OS: "linux", Architecture: "amd64"}, binary: []byte("fake ctxc for amd64")},
			{platform: v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}, binary: []byte("fake ctxc for arm64")},
		},
	}
}

func mustBuild(t *testing.T, s spec) v1.ImageIndex {
	t.Helper()
	idx, err := build(s)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

func mustDigest(t *testing.T, idx v1.ImageIndex) v1.Hash {
	t.Helper()
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// images returns the index's images by platform.
func images(t *testing.T, idx v1.ImageIndex) map[string]v1.Image {
	t.Helper()
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]v1.Image{}
	for _, d := range m.Manifests {
		if d.Platform == nil {
			t.Fatalf("manifest %s has no platform", d.Digest)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		out[d.Platform.String()] = img
	}
	return out
}

func TestIndexAndConfig(t *testing.T) {
	s := testSpec(t)
	idx := mustBuild(t, s)
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{
		"org.opencontainers.image.title":       "ctxc",
		"org.opencontainers.image.description": annotations(s)["org.opencontainers.image.description"],
		"org.opencontainers.image.version":     "1.2.3",
		"org.opencontainers.image.revision":    "abc1234",
		"org.opencontainers.image.created":     "2026-05-04T03:02:01Z",
		"org.opencontainers.image.source":      "https://github.com/example/ctxc",
		"org.opencontainers.image.url":         "https://github.com/example/ctxc",
		"org.opencontainers.image.licenses":    "Apache-2.0",
	}
	if diff := cmp.Diff(wantLabels, m.Annotations); diff != "" {
		t.Errorf("index annotations (-want +got):\n%s", diff)
	}
	if m.MediaType != types.OCIImageIndex {
		t.Errorf("index media type %s, want %s", m.MediaType, types.OCIImageIndex)
	}
	// The bytes the OCI spec's types write for it (what skopeo compares
	// before keeping a digest), with no artifactType: these are images.
	raw, err := idx.RawManifest()
	if err != nil {
		t.Fatal(err)
	}
	var asSpec ocispec.Index
	if err := json.Unmarshal(raw, &asSpec); err != nil {
		t.Fatal(err)
	}
	if again, err := json.Marshal(asSpec); err != nil || !bytes.Equal(again, raw) {
		t.Errorf("the index is not as the OCI spec's types write it (%v):\n%s\n%s", err, raw, again)
	}
	if bytes.Contains(raw, []byte("artifactType")) {
		t.Errorf("the index gives an artifactType: %s", raw)
	}
	if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != mustDigest(t, idx).Hex {
		t.Errorf("the index's digest is not the SHA-256 of its bytes")
	}

	byPlatform := images(t, idx)
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64/v8"}, slices.Sorted(maps.Keys(byPlatform))); diff != "" {
		t.Fatalf("platforms (-want +got):\n%s", diff)
	}
	for platform, img := range byPlatform {
		t.Run(platform, func(t *testing.T) {
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			want := v1.Config{
				User:       "65532:65532",
				Entrypoint: []string{"/ctxc"},
				Cmd:        []string{"serve"},
				Env: []string{
					"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
					"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
					"CTXC_LISTEN=0.0.0.0:50051", "CTXC_LOG_FORMAT=json", "CTXC_REFLECTION=false", "CTXC_DRAIN_DELAY=5s",
				},
				ExposedPorts: map[string]struct{}{"50051/tcp": {}},
				WorkingDir:   "/home/nonroot",
				Healthcheck:  &v1.HealthConfig{Test: []string{"CMD", "/ctxc", "health"}, Interval: 10 * time.Second, Timeout: 5 * time.Second, StartPeriod: 5 * time.Second, Retries: 3},
				Labels:       wantLabels,
			}
			if diff := cmp.Diff(want, cf.Config); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			if got := cf.Platform().String(); got != platform {
				t.Errorf("the config's platform is %s, the index says %s", got, platform)
			}
			if !cf.Created.Time.Equal(s.created) {
				t.Errorf("created %v, want the commit's time %v", cf.Created.Time, s.created)
			}
			for i, h := range cf.History {
				if !h.Created.Time.Equal(s.created) {
					t.Errorf("history[%d] created %v, want %v", i, h.Created.Time, s.created)
				}
			}
			manifest, err := img.Manifest()
			if err != nil {
				t.Fatal(err)
			}
			if manifest.MediaType != types.OCIManifestSchema1 || manifest.Config.MediaType != types.OCIConfigJSON {
				t.Errorf("media types %s, %s: want OCI's", manifest.MediaType, manifest.Config.MediaType)
			}
			for _, l := range manifest.Layers {
				if l.MediaType != types.OCILayer {
					t.Errorf("layer %s is %s, want %s", l.Digest, l.MediaType, types.OCILayer)
				}
			}
		})
	}

	// The files every platform shares are one layer, stored once.
	var first []v1.Hash
	for _, img := range byPlatform {
		layers, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		if len(layers) != 2 {
			t.Fatalf("%d layers, want the shared files and the binary", len(layers))
		}
		d, _ := layers[0].Digest()
		first = append(first, d)
	}
	if first[0] != first[1] {
		t.Errorf("the platforms' first layers differ (%s, %s): the shared files should be one layer", first[0], first[1])
	}
}

// fsEntry is an entry of a layer.
type fsEntry struct {
	Name     string
	Type     byte
	Mode     int64
	UID, GID int
	ModTime  time.Time
	SHA256   string
}

// files reads the entries of the image's layers, base first, as written.
func files(t *testing.T, img v1.Image) (entries []fsEntry, contents map[string][]byte) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	contents = map[string][]byte{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			e := fsEntry{Name: h.Name, Type: h.Typeflag, Mode: h.Mode, UID: h.Uid, GID: h.Gid, ModTime: h.ModTime.UTC()}
			if h.Typeflag == tar.TypeReg {
				e.SHA256 = short(data)
				contents[h.Name] = data
			}
			entries = append(entries, e)
		}
		rc.Close()
	}
	return entries, contents
}

func short(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

func TestFiles(t *testing.T) {
	s := testSpec(t)
	byPlatform := images(t, mustBuild(t, s))
	for _, b := range s.binaries {
		t.Run(b.platform.String(), func(t *testing.T) {
			entries, contents := files(t, byPlatform[b.platform.String()])
			at := s.created
			want := []fsEntry{
				{Name: "etc/", Type: tar.TypeDir, Mode: 0o755, ModTime: at},
				{Name: "etc/group", Type: tar.TypeReg, Mode: 0o644, ModTime: at, SHA256: short(contents["etc/group"])},
				{Name: "etc/passwd", Type: tar.TypeReg, Mode: 0o644, ModTime: at, SHA256: short(contents["etc/passwd"])},
				{Name: "etc/ssl/", Type: tar.TypeDir, Mode: 0o755, ModTime: at},
				{Name: "etc/ssl/certs/", Type: tar.TypeDir, Mode: 0o755, ModTime: at},
				{Name: "etc/ssl/certs/ca-certificates.crt", Type: tar.TypeReg, Mode: 0o644, ModTime: at, SHA256: short(s.caCerts)},
				{Name: "home/", Type: tar.TypeDir, Mode: 0o755, ModTime: at},
				{Name: "home/nonroot/", Type: tar.TypeDir, Mode: 0o700, UID: 65532, GID: 65532, ModTime: at},
				{Name: "tmp/", Type: tar.TypeDir, Mode: 0o1777, ModTime: at},
				{Name: "ctxc", Type: tar.TypeReg, Mode: 0o755, ModTime: at, SHA256: short(b.binary)},
			}
			if diff := cmp.Diff(want, entries); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			// The config's user is a name in /etc/passwd and /etc/group, with
			// the home the config works in.
			if got, want := string(contents["etc/passwd"]), "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"; got != want {
				t.Errorf("/etc/passwd:\n%s\nwant:\n%s", got, want)
			}
			if got, want := string(contents["etc/group"]), "root:x:0:\nnonroot:x:65532:\n"; got != want {
				t.Errorf("/etc/group:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestReproducible: the same inputs give the same index, layers and
// archive byte for byte; another commit gives another digest.
func TestReproducible(t *testing.T) {
	s := testSpec(t)
	dir := t.TempDir()
	var digests []v1.Hash
	var archives [][]byte
	for i := range 2 {
		idx := mustBuild(t, s)
		d, err := idx.Digest()
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, d)
		out := filepath.Join(dir, "image.oci.tar")
		if err := writeArchive(out, idx, s.version, s.repository+":"+s.version, s.created); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		archives = append(archives, data)
		if i == 0 {
			time.Sleep(1100 * time.Millisecond) // a clock that leaked into a timestamp would differ
		}
	}
	if digests[0] != digests[1] {
		t.Errorf("two builds: %s and %s", digests[0], digests[1])
	}
	if !bytes.Equal(archives[0], archives[1]) {
		t.Error("two builds wrote different archives")
	}
	other := s
	other.commit = "def5678"
	if d, _ := mustBuild(t, other).Digest(); d == digests[0] {
		t.Errorf("another commit gives the same digest %s", d)
	}
}

// TestArchive: the archive is an OCI image layout whose index.json names the
// image index by its tag and name, and reads back as the index it was
// written from.
func TestArchive(t *testing.T) {
	s := testSpec(t)
	idx := mustBuild(t, s)
	dir := t.TempDir()
	archive := filepath.Join(dir, "image.oci.tar")
	if err := writeArchive(archive, idx, s.version, "ghcr.io/example/ctxc:1.2.3", s.created); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(archive + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("the temporary file is left: %v", err)
	}
	root := filepath.Join(dir, "layout")
	names := untarAll(t, archive, root, s.created)
	if !slices.IsSorted(names) {
		t.Errorf("the archive's entries are not in name order: %q", names)
	}
	for _, want := range []string{"oci-layout", "index.json", "blobs/", "blobs/sha256/"} {
		if !slices.Contains(names, want) {
			t.Errorf("the archive holds no %s: %q", want, names)
		}
	}

	p, err := layout.FromPath(root)
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	digest, _ := idx.Digest()
	if len(m.Manifests) != 1 {
		t.Fatalf("index.json lists %d entries, want the image index alone", len(m.Manifests))
	}
	d := m.Manifests[0]
	want := map[string]string{"org.opencontainers.image.ref.name": "1.2.3", "io.containerd.image.name": "ghcr.io/example/ctxc:1.2.3"}
	if d.Digest != digest || d.MediaType != types.OCIImageIndex || !cmp.Equal(d.Annotations, want) {
		t.Errorf("index.json lists %s %s %v, want %s %s %v", d.MediaType, d.Digest, d.Annotations, types.OCIImageIndex, digest, want)
	}
	back, err := top.ImageIndex(d.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Index(back); err != nil {
		t.Errorf("the index read back does not hold together: %v", err)
	}
	if got, _ := back.Digest(); got != digest {
		t.Errorf("read back as %s, written as %s", got, digest)
	}
}

// untarAll unpacks archive into dir, checking every entry's time and
// owner, and returns the entries' names in their order.
func untarAll(t *testing.T, archive, dir string, mtime time.Time) []string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if !h.ModTime.Equal(mtime) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" {
			t.Errorf("%s: time %v, owner %d:%d %q; want %v, 0:0", h.Name, h.ModTime, h.Uid, h.Gid, h.Uname, mtime)
		}
		path := filepath.Join(dir, h.Name)
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDockerfileAgrees: the image runs as the Dockerfile's does: the same
// environment, port, user, health check, entrypoint and command.
func TestDockerfileAgrees(t *testing.T) {
	df := finalStage(t, "../../Dockerfile")
	cfg := runtimeConfig(testSpec(t))
	checked := 0
	for _, ins := range df {
		switch ins.keyword {
		case "ENV":
			for _, kv := range strings.Fields(ins.args) {
				checked++
				if !slices.Contains(cfg.Env, kv) {
					t.Errorf("the Dockerfile sets %s, the image's environment is %q", kv, cfg.Env)
				}
			}
		case "EXPOSE":
			for _, port := range strings.Fields(ins.args) {
				checked++
				if _, ok := cfg.ExposedPorts[port+"/tcp"]; !ok {
					t.Errorf("the Dockerfile exposes %s, the image %v", port, cfg.ExposedPorts)
				}
			}
		case "USER":
			// A name there, the same ids here (the image's /etc/passwd and
			// /etc/group give the name those ids).
			checked++
			if want := userName + ":" + userName; ins.args != want || cfg.User != "65532:65532" {
				t.Errorf("the Dockerfile runs as %s, the image as %s; want %s and 65532:65532", ins.args, cfg.User, want)
			}
		case "HEALTHCHECK":
			checked++
			opts, cmd, _ := strings.Cut(ins.args, "CMD ")
			want := &v1.HealthConfig{Test: append([]string{"CMD"}, jsonArgs(t, cmd)...)}
			for _, o := range strings.Fields(opts) {
				k, v, _ := strings.Cut(strings.TrimPrefix(o, "--"), "=")
				switch k {
				case "interval":
					want.Interval = duration(t, v)
				case "timeout":
					want.Timeout = duration(t, v)
				case "start-period":
					want.StartPeriod = duration(t, v)
				case "retries":
					if err := json.Unmarshal([]byte(v), &want.Retries); err != nil {
						t.Fatal(err)
					}
				default:
					t.Errorf("HEALTHCHECK option %s is not compared", k)
				}
			}
			if diff := cmp.Diff(want, cfg.Healthcheck); diff != "" {
				t.Errorf("health check (-Dockerfile +image):\n%s", diff)
			}
		case "ENTRYPOINT":
			checked++
			if diff := cmp.Diff(jsonArgs(t, ins.args), cfg.Entrypoint); diff != "" {
				t.Errorf("entrypoint (-Dockerfile +image):\n%s", diff)
			}
		case "CMD":
			checked++
			if diff := cmp.Diff(jsonArgs(t, ins.args), cfg.Cmd); diff != "" {
				t.Errorf("cmd (-Dockerfile +image):\n%s", diff)
			}
		case "COPY":
			checked++
			if f := strings.Fields(ins.args); f[len(f)-1] != cfg.Entrypoint[0] {
				t.Errorf("the Dockerfile copies the binary to %s, the image runs %s", f[len(f)-1], cfg.Entrypoint[0])
			}
		default:
			t.Errorf("the Dockerfile's final stage has %s, which this test does not compare", ins.keyword)
		}
	}
	// ENV's four variables, EXPOSE, USER, HEALTHCHECK, ENTRYPOINT, CMD, COPY.
	if checked < 10 {
		t.Errorf("compared %d settings of the Dockerfile: the parse no longer finds them", checked)
	}
}

type instruction struct{ keyword, args string }

// finalStage reads the instructions after the Dockerfile's last FROM,
// joining continued lines.
func finalStage(t *testing.T, file string) []instruction {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []instruction
	var line string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		text := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(text, "#") || (text == "" && line == "") {
			continue
		}
		if cont, ok := strings.CutSuffix(text, "\\"); ok {
			line += cont + " "
			continue
		}
		line += text
		keyword, args, _ := strings.Cut(line, " ")
		line = ""
		if keyword == "FROM" {
			out = nil
			continue
		}
		out = append(out, instruction{keyword, strings.TrimSpace(args)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func jsonArgs(t *testing.T, s string) []string {
	t.Helper()
	var args []string
	if err := json.Unmarshal([]byte(s), &args); err != nil {
		t.Fatalf("%q is not the JSON form: %v", s, err)
	}
	return args
}

func duration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestSBOM: the image joins the bill of materials as a container component
// whose hash is the index's digest, holding the CA certificates and
// depending on the BOM's application; what was there stays.
func TestSBOM(t *testing.T) {
	s := testSpec(t)
	idx := mustBuild(t, s)
	digest, _ := idx.Digest()
	file := filepath.Join(t.TempDir(), "bom.cdx.json")
	app := "pkg:golang/github.com/example/ctxc@v0.0.0?type=module#cmd/ctxc"
	lib := "pkg:golang/google.golang.org/grpc@v1.0.0?type=module"
	if err := os.WriteFile(file, []byte(`{
  "$schema": "http://cyclonedx.org/schema/bom-1.6.schema.json",
  "bomFormat": "CycloneDX",
  "specVersion": "1.6",
  "version": 1,
  "metadata": {"component": {"bom-ref": "`+app+`", "type": "application", "name": "github.com/example/ctxc"}},
  "components": [{"bom-ref": "`+lib+`", "type": "library", "name": "google.golang.org/grpc", "version": "v1.0.0"}],
  "dependencies": [{"ref": "`+app+`", "dependsOn": ["`+lib+`"]}]
}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := addToSBOM(file, s, idx, "20230311+deb12u1"); err != nil {
		t.Fatal(err)
	}
	var bom cdx.BOM
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := cdx.NewBOMDecoder(bytes.NewReader(raw), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		t.Fatal(err)
	}
	if bom.SpecVersion != cdx.SpecVersion1_6 {
		t.Errorf("spec version %s, want the BOM's own 1.6", bom.SpecVersion)
	}
	if bom.Components == nil || len(*bom.Components) != 2 || (*bom.Components)[0].BOMRef != lib {
		t.Fatalf("components %+v: want the library kept and the image added", bom.Components)
	}
	image := (*bom.Components)[1]
	purl := "pkg:oci/ctxc@sha256%3A" + digest.Hex + "?repository_url=ghcr.io/example/ctxc&tag=1.2.3"
	manifest, _ := idx.IndexManifest()
	wantProps := []cdx.Property{}
	for _, m := range manifest.Manifests {
		wantProps = append(wantProps, cdx.Property{Name: "ctxc:image:manifest:" + m.Platform.String(), Value: m.Digest.String()})
	}
	caSum := sha256.Sum256(s.caCerts)
	want := cdx.Component{
		BOMRef: purl, Type: cdx.ComponentTypeContainer, Name: "ghcr.io/example/ctxc", Version: "1.2.3",
		Description: "the container image (OCI image index) of the release",
		Hashes:      &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: digest.Hex}},
		PackageURL:  purl,
		Properties:  &wantProps,
		Components: &[]cdx.Component{{
			BOMRef: purl + "#ca-certificates", Type: cdx.ComponentTypeData, Name: "ca-certificates", Version: "20230311+deb12u1",
			Description: "Debian's CA certificates, as /etc/ssl/certs/ca-certificates.crt",
			Hashes:      &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: hex.EncodeToString(caSum[:])}},
			PackageURL:  "pkg:deb/debian/ca-certificates@20230311+deb12u1?arch=all",
		}},
	}
	if diff := cmp.Diff(want, image); diff != "" {
		t.Errorf("the image's component (-want +got):\n%s", diff)
	}
	wantDeps := []cdx.Dependency{
		{Ref: app, Dependencies: &[]string{lib}},
		{Ref: purl, Dependencies: &[]string{app, purl + "#ca-certificates"}},
	}
	if diff := cmp.Diff(wantDeps, *bom.Dependencies); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}
	if err := addToSBOM(file, s, idx, ""); err == nil || !strings.Contains(err.Error(), "already lists") {
		t.Errorf("adding the image twice: %v, want it refused", err)
	}
}

// TestRun drives the command as make image does: it writes the archive and
// the index, whose SHA-256 is the digest it prints.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	s := testSpec(t)
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ca := write("ca.crt", s.caCerts)
	amd64 := write("ctxc-amd64", []byte("fake amd64"))
	arm64 := write("ctxc-arm64", []byte("fake arm64"))
	out, index := filepath.Join(dir, "image.oci.tar"), filepath.Join(dir, "index.json")
	base := []string{"-version", "1.2.3", "-commit", "abc1234", "-source-date-epoch", "1777777777",
		"-repository", "ghcr.io/example/ctxc", "-source", "https://github.com/example/ctxc", "-ca-certs", ca}

	var stdout bytes.Buffer
	if err := run(append(base, "-binary", "linux/amd64="+amd64, "-binary", "linux/arm64="+arm64, "-out", out, "-index-out", index), &stdout); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	var m v1.IndexManifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], out+": ghcr.io/example/ctxc:1.2.3@sha256:"+hex.EncodeToString(sum[:])+" (") {
		t.Errorf("printed:\n%s\nwant the archive, then the name and the index file's SHA-256 (%x), then a line per platform", stdout.String(), sum)
	}
	for i, platform := range []string{"linux/amd64", "linux/arm64/v8"} {
		if got := m.Manifests[i].Platform.String(); got != platform || len(lines) < 3 || lines[i+1] != "  "+platform+" "+m.Manifests[i].Digest.String() {
			t.Errorf("manifest %d is %s, printed %q; want %s", i, got, lines[min(i+1, len(lines)-1)], platform)
		}
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no binary", append(base, "-out", out), "no -binary"},
		{"no time", []string{"-version", "1", "-commit", "c", "-repository", "r", "-source", "s", "-ca-certs", ca, "-binary", "linux/amd64=" + amd64, "-out", out}, "-source-date-epoch is not set"},
		{"no version", append(slices.Clone(base[2:]), "-binary", "linux/amd64="+amd64, "-out", out), "-version is empty"},
		{"no out", append(base, "-binary", "linux/amd64="+amd64), "-out is empty"},
		{"bad platform", append(base, "-binary", "amd64="+amd64, "-out", out), "want os/arch"},
		{"missing binary", append(base, "-binary", "linux/amd64="+filepath.Join(dir, "none"), "-out", out), "-binary linux/amd64="},
		{"no certificates", append(base, "-ca-certs", amd64, "-binary", "linux/amd64="+amd64, "-out", out), "-ca-certs holds no certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(tc.args, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}
