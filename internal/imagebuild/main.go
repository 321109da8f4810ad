// Command imagebuild assembles ctxc's container image (make image, make
// dist) without a container daemon and without pulling a base image, from
// files this machine has: the static ctxc binary of each platform, Debian's
// CA certificates and an /etc/passwd of its own. It writes an OCI image
// layout as a tar, whose index holds one image per platform, and prints the
// index's digest. Everything in it is dated at the commit's time and every
// tar is written in name order, so that the same binaries give the same
// digest on every build (docs/releases.md, "The container image").
//
//	go run ./internal/imagebuild -version 0.1.0 -commit abc1234 \
//	    -source-date-epoch $(git log -1 --format=%ct) \
//	    -repository ghcr.io/contextcompiler/ctxc -source https://github.com/contextcompiler/ctxc \
//	    -binary linux/amd64=bin/image/linux_amd64/ctxc -binary linux/arm64=bin/image/linux_arm64/ctxc \
//	    -out dist/ctxc-0.1.0-image.oci.tar
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "imagebuild:", err)
		os.Exit(1)
	}
}

// binaryFlags collects the repeated -binary os/arch=path.
type binaryFlags []string

func (b *binaryFlags) String() string     { return strings.Join(*b, ",") }
func (b *binaryFlags) Set(v string) error { *b = append(*b, v); return nil }

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("imagebuild", flag.ContinueOnError)
	var s spec
	var binaries binaryFlags
	var epoch int64
	var caFile, caVersion, out, indexOut, sbom string
	fs.StringVar(&s.version, "version", "", "the release (the VERSION file)")
	fs.StringVar(&s.commit, "commit", "", "the commit the binaries were built from")
	fs.Int64Var(&epoch, "source-date-epoch", 0, "the commit's time in seconds since 1970 (git log -1 --format=%ct): every timestamp in the image")
	fs.StringVar(&s.repository, "repository", "", "where the release publishes the image (the chart's image.repository)")
	fs.StringVar(&s.source, "source", "", "the source repository's URL")
	fs.StringVar(&s.licenses, "licenses", "", "the license, an SPDX expression")
	fs.Var(&binaries, "binary", "os/arch[/variant]=path of a static ctxc (repeat per platform)")
	fs.StringVar(&caFile, "ca-certs", caPath, "the PEM bundle of CA certificates (Debian's ca-certificates)")
	fs.StringVar(&caVersion, "ca-certs-version", "", "the version of Debian's ca-certificates, for the bill of materials")
	fs.StringVar(&out, "out", "", "the OCI image layout to write, as a tar")
	fs.StringVar(&indexOut, "index-out", "", "also write the image index itself here (its SHA-256 is the image's digest)")
	fs.StringVar(&sbom, "sbom", "", "a CycloneDX JSON bill of materials to add the image to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if out == "" {
		return errors.New("-out is empty: name the tar to write")
	}
	if epoch > 0 {
		s.created = time.Unix(epoch, 0).UTC()
	}
	var err error
	if s.caCerts, err = os.ReadFile(caFile); err != nil {
		return fmt.Errorf("-ca-certs: %w (Debian's ca-certificates package writes %s)", err, caPath)
	}
	for _, b := range binaries {
		pb, err := readBinary(b)
		if err != nil {
			return fmt.Errorf("-binary %s: %w", b, err)
		}
		s.binaries = append(s.binaries, pb)
	}

	idx, err := build(s)
	if err != nil {
		return err
	}
	if err := writeArchive(out, idx, s.version, s.repository+":"+s.version, s.created); err != nil {
		return err
	}
	if indexOut != "" {
		raw, err := idx.RawManifest()
		if err != nil {
			return err
		}
		if err := os.WriteFile(indexOut, raw, 0o644); err != nil {
			return err
		}
	}
	if sbom != "" {
		if err := addToSBOM(sbom, s, idx, caVersion); err != nil {
			return fmt.Errorf("-sbom: %w", err)
		}
	}
	return report(stdout, out, s, idx)
}

// readBinary reads one -binary os/arch[/variant]=path.
func readBinary(arg string) (platformBinary, error) {
	platform, file, ok := strings.Cut(arg, "=")
	if !ok || file == "" {
		return platformBinary{}, errors.New("want os/arch=path")
	}
	p, err := v1.ParsePlatform(platform)
	if err != nil {
		return platformBinary{}, err
	}
	if p.OS == "" || p.Architecture == "" {
		return platformBinary{}, fmt.Errorf("platform %q: want os/arch", platform)
	}
	// arm64 images are linux/arm64/v8 wherever a variant is given.
	if p.Architecture == "arm64" && p.Variant == "" {
		p.Variant = "v8"
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return platformBinary{}, err
	}
	return platformBinary{platform: *p, binary: data}, nil
}

// report prints the image's name and digest, and each platform's.
func report(w io.Writer, out string, s spec, idx v1.ImageIndex) error {
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	info, err := os.Stat(out)
	if err != nil {
		return err
	}
	manifest, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %s:%s@%s (%.1f MB)\n", out, s.repository, s.version, digest, float64(info.Size())/1e6)
	for _, m := range manifest.Manifests {
		fmt.Fprintf(w, "  %s %s\n", m.Platform, m.Digest)
	}
	return nil
}
