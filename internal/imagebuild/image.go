package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// spec is what one image is built from.
type spec struct {
	version    string    // the release, the VERSION file
	commit     string    // the commit the binaries were built from (git describe)
	created    time.Time // the commit's time: every timestamp in the image, so that a rebuild is identical
	repository string    // where the release publishes the image (the chart's image.repository)
	source     string    // the source repository's URL
	licenses   string    // an SPDX expression, or empty when unknown
	caCerts    []byte    // a PEM bundle of CA certificates (Debian's ca-certificates)
	binaries   []platformBinary
}

// platformBinary is the static ctxc of one platform.
type platformBinary struct {
	platform v1.Platform
	binary   []byte
}

// The user the image runs as: the Dockerfile's distroless base calls uid
// 65532 nonroot, and the Helm chart's and the sidecar's pods run as it.
const (
	userID   = 65532
	userName = "nonroot"
	userHome = "/home/nonroot"
	caPath   = "/etc/ssl/certs/ca-certificates.crt"
)

// runtimeConfig is what the Dockerfile's final stage sets (its ENV, EXPOSE,
// USER, HEALTHCHECK, ENTRYPOINT and CMD), with what its distroless base adds
// (PATH, SSL_CERT_FILE and the working directory); a test reads the
// Dockerfile and compares. The user is numeric, so that Kubernetes can check
// runAsNonRoot without reading /etc/passwd.
func runtimeConfig(s spec) v1.Config {
	return v1.Config{
		User:       fmt.Sprintf("%d:%d", userID, userID),
		Entrypoint: []string{"/ctxc"},
		Cmd:        []string{"serve"},
		Env: []string{
			"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			"SSL_CERT_FILE=" + caPath,
			"CTXC_LISTEN=0.0.0.0:50051",
			"CTXC_LOG_FORMAT=json",
			"CTXC_REFLECTION=false",
			"CTXC_DRAIN_DELAY=5s",
		},
		ExposedPorts: map[string]struct{}{"50051/tcp": {}},
		WorkingDir:   userHome,
		// Docker's field for HEALTHCHECK (the OCI config has none); Docker
		// and Podman read it from an OCI image too.
		Healthcheck: &v1.HealthConfig{
			Test:        []string{"CMD", "/ctxc", "health"},
			Interval:    10 * time.Second,
			Timeout:     5 * time.Second,
			StartPeriod: 5 * time.Second,
			Retries:     3,
		},
		Labels: annotations(s),
	}
}

// annotations are the org.opencontainers.image.* keys, set as the config's
// labels and as the index's and manifests' annotations.
func annotations(s spec) map[string]string {
	a := map[string]string{
		"org.opencontainers.image.title":       "ctxc",
		"org.opencontainers.image.description": "ctxc, the context compiler for LLM agents: a gRPC and HTTP/JSON service and a proxy in front of LLM APIs",
		"org.opencontainers.image.version":     s.version,
		"org.opencontainers.image.revision":    s.commit,
		"org.opencontainers.image.created":     s.created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.source":      s.source,
		"org.opencontainers.image.url":         s.source,
	}
	if s.licenses != "" {
		a["org.opencontainers.image.licenses"] = s.licenses
	}
	return a
}

// check refuses a spec that would build an image that cannot be trusted to
// run: each error names the flag it comes from.
func (s spec) check() error {
	var errs []error
	for _, f := range []struct{ flag, value string }{{"-version", s.version}, {"-commit", s.commit}, {"-repository", s.repository}, {"-source", s.source}} {
		if f.value == "" {
			errs = append(errs, fmt.Errorf("%s is empty", f.flag))
		}
	}
	if s.created.IsZero() {
		errs = append(errs, errors.New("-source-date-epoch is not set (the commit's time: git log -1 --format=%ct)"))
	}
	if len(s.binaries) == 0 {
		errs = append(errs, errors.New("no -binary: give at least one os/arch=path"))
	}
	if n, err := countCerts(s.caCerts); err != nil {
		errs = append(errs, fmt.Errorf("-ca-certs: %w", err))
	} else if n == 0 {
		errs = append(errs, errors.New("-ca-certs holds no certificate (Debian's ca-certificates writes "+caPath+")"))
	}
	return errors.Join(errs...)
}

// countCerts counts the certificates of a PEM bundle, failing on one that
// does not parse.
func countCerts(bundle []byte) (int, error) {
	n := 0
	for rest := bundle; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return n, nil
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return n, fmt.Errorf("certificate %d: %w", n+1, err)
		}
		n++
	}
}

// build assembles the index: one image per platform, each of two layers,
// the files every platform shares (the user, the CA certificates, the home
// and temporary directories) and the platform's /ctxc.
func build(s spec) (v1.ImageIndex, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	base, err := layer(baseFiles(s), s.created)
	if err != nil {
		return nil, fmt.Errorf("base layer: %w", err)
	}
	var adds []mutate.IndexAddendum
	for _, b := range s.binaries {
		img, err := platformImage(s, base, b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.platform, err)
		}
		platform := b.platform
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &platform}})
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	return canonicalIndex(mutate.Annotations(idx, annotations(s)).(v1.ImageIndex))
}

// canonicalIndex is idx serialized by the OCI image spec's own Go types,
// in their field order, and without the artifactType go-containerregistry
// gives an image's descriptor (these are images, not artifacts): the bytes
// that tools built on those types (containerd, skopeo) write for it, so
// that one copying the index without changing it (skopeo copy --all
// --preserve-digests) finds it unchanged and keeps its digest.
func canonicalIndex(idx v1.ImageIndex) (v1.ImageIndex, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	out := ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex, Annotations: m.Annotations}
	for _, d := range m.Manifests {
		desc := ocispec.Descriptor{MediaType: string(d.MediaType), Digest: digest.Digest(d.Digest.String()), Size: d.Size, Annotations: d.Annotations}
		if p := d.Platform; p != nil {
			desc.Platform = &ocispec.Platform{Architecture: p.Architecture, OS: p.OS, OSVersion: p.OSVersion, OSFeatures: p.OSFeatures, Variant: p.Variant}
		}
		out.Manifests = append(out.Manifests, desc)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	h, size, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	return rawIndex{base: idx, raw: raw, digest: h, size: size}, nil
}

// rawIndex is an index with its manifest given as bytes; its images are
// base's.
type rawIndex struct {
	base   v1.ImageIndex
	raw    []byte
	digest v1.Hash
	size   int64
}

func (r rawIndex) MediaType() (types.MediaType, error)         { return types.OCIImageIndex, nil }
func (r rawIndex) RawManifest() ([]byte, error)                { return r.raw, nil }
func (r rawIndex) Digest() (v1.Hash, error)                    { return r.digest, nil }
func (r rawIndex) Size() (int64, error)                        { return r.size, nil }
func (r rawIndex) Image(h v1.Hash) (v1.Image, error)           { return r.base.Image(h) }
func (r rawIndex) ImageIndex(h v1.Hash) (v1.ImageIndex, error) { return r.base.ImageIndex(h) }
func (r rawIndex) IndexManifest() (*v1.IndexManifest, error) {
	return v1.ParseIndexManifest(bytes.NewReader(r.raw))
}

func platformImage(s spec, base v1.Layer, b platformBinary) (v1.Image, error) {
	bin, err := layer([]file{{name: "ctxc", mode: 0o755, data: b.binary}}, s.created)
	if err != nil {
		return nil, fmt.Errorf("binary layer: %w", err)
	}
	created := v1.Time{Time: s.created}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, MediaType: types.OCILayer, History: v1.History{Created: created, CreatedBy: "imagebuild: /etc/passwd, /etc/group, " + caPath + ", " + userHome + ", /tmp", Comment: "the files of every platform"}},
		mutate.Addendum{Layer: bin, MediaType: types.OCILayer, History: v1.History{Created: created, CreatedBy: "imagebuild: /ctxc", Comment: "ctxc " + s.version + " for " + b.platform.String()}},
	)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created = created
	cf.OS, cf.Architecture, cf.Variant, cf.OSVersion = b.platform.OS, b.platform.Architecture, b.platform.Variant, b.platform.OSVersion
	cf.Config = runtimeConfig(s)
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, err
	}
	return mutate.Annotations(img, annotations(s)).(v1.Image), nil
}

// file is an entry of a layer, named without the leading slash; uid is its
// owner and group.
type file struct {
	name string
	dir  bool
	mode int64
	uid  int
	data []byte
}

func baseFiles(s spec) []file {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:%s:/sbin/nologin\n", userName, userID, userID, userName, userHome)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", userName, userID)
	return []file{
		{name: "etc", dir: true, mode: 0o755},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/ssl", dir: true, mode: 0o755},
		{name: "etc/ssl/certs", dir: true, mode: 0o755},
		{name: strings.TrimPrefix(caPath, "/"), mode: 0o644, data: s.caCerts},
		{name: "home", dir: true, mode: 0o755},
		{name: strings.TrimPrefix(userHome, "/"), dir: true, mode: 0o700, uid: userID},
		{name: "tmp", dir: true, mode: 0o1777},
	}
}

// layer writes files as a tar in name order, every entry with the same
// time and numeric owners only, and gzips it: the same files give the same
// digest on every build.
func layer(files []file, mtime time.Time) (v1.Layer, error) {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b file) int { return strings.Compare(a.name, b.name) })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{
			Name:     f.name,
			Mode:     f.mode,
			Uid:      f.uid,
			Gid:      f.uid,
			ModTime:  mtime.UTC().Truncate(time.Second),
			Typeflag: tar.TypeReg,
			Size:     int64(len(f.data)),
		}
		if f.dir {
			h.Name, h.Typeflag, h.Size = f.name+"/", tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.BestCompression), tarball.WithCompressedCaching)
}
