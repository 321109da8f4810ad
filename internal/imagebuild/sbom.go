package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"

	cdx "github.com/CycloneDX/cyclonedx-go"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// addToSBOM adds the image to the CycloneDX bill of materials at file (the
// one cyclonedx-gomod wrote for the binary): a container component named
// and versioned as the release publishes it, whose hash and package URL
// are the index's digest and whose properties give each platform's
// manifest digest, holding Debian's ca-certificates (caVersion, the
// package's version, when known), and depending on the BOM's own
// component, the ctxc application. The BOM keeps its spec version.
func addToSBOM(file string, s spec, idx v1.ImageIndex, caVersion string) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(raw), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if bom.Metadata == nil || bom.Metadata.Component == nil || bom.Metadata.Component.BOMRef == "" {
		return fmt.Errorf("%s: no metadata.component: not a bill of materials of the binary", file)
	}
	image, err := imageComponent(s, idx, caVersion)
	if err != nil {
		return err
	}
	components := []cdx.Component{}
	if bom.Components != nil {
		components = *bom.Components
	}
	for _, c := range components {
		if c.BOMRef == image.BOMRef {
			return fmt.Errorf("%s already lists %s", file, image.BOMRef)
		}
	}
	components = append(components, image)
	bom.Components = &components

	dependsOn := []string{bom.Metadata.Component.BOMRef}
	for _, c := range *image.Components {
		dependsOn = append(dependsOn, c.BOMRef)
	}
	deps := []cdx.Dependency{}
	if bom.Dependencies != nil {
		deps = *bom.Dependencies
	}
	deps = append(deps, cdx.Dependency{Ref: image.BOMRef, Dependencies: &dependsOn})
	bom.Dependencies = &deps

	var out bytes.Buffer
	if err := cdx.NewBOMEncoder(&out, cdx.BOMFileFormatJSON).SetPretty(true).EncodeVersion(&bom, bom.SpecVersion); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return os.WriteFile(file, out.Bytes(), 0o644)
}

func imageComponent(s spec, idx v1.ImageIndex, caVersion string) (cdx.Component, error) {
	digest, err := idx.Digest()
	if err != nil {
		return cdx.Component{}, err
	}
	manifest, err := idx.IndexManifest()
	if err != nil {
		return cdx.Component{}, err
	}
	var props []cdx.Property
	for _, m := range manifest.Manifests {
		if m.Platform != nil {
			props = append(props, cdx.Property{Name: "ctxc:image:manifest:" + m.Platform.String(), Value: m.Digest.String()})
		}
	}
	// pkg:oci/<last path element>@<digest>, with where it is published.
	purl := fmt.Sprintf("pkg:oci/%s@sha256%%3A%s?repository_url=%s&tag=%s", path.Base(s.repository), digest.Hex, s.repository, s.version)

	bundle := sha256.Sum256(s.caCerts)
	ca := cdx.Component{
		BOMRef:      purl + "#ca-certificates",
		Type:        cdx.ComponentTypeData,
		Name:        "ca-certificates",
		Version:     caVersion,
		Description: "Debian's CA certificates, as " + caPath,
		Hashes:      &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: hex.EncodeToString(bundle[:])}},
	}
	if caVersion != "" {
		ca.PackageURL = "pkg:deb/debian/ca-certificates@" + caVersion + "?arch=all"
	}
	return cdx.Component{
		BOMRef:      purl,
		Type:        cdx.ComponentTypeContainer,
		Name:        s.repository,
		Version:     s.version,
		Description: "the container image (OCI image index) of the release",
		Hashes:      &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: digest.Hex}},
		PackageURL:  purl,
		Properties:  &props,
		Components:  &[]cdx.Component{ca},
	}, nil
}
