#!/usr/bin/env bash
# Builds the release directory dist/ctxc-$VERSION (make dist): the ctxc binary
# for linux and darwin on amd64 and arm64 (static, one tar.gz each), a
# CycloneDX software bill of materials, the container image of the linux
# binaries (an OCI image layout as a tar, and its index), the TypeScript
# client as an npm tarball, the Python client as an sdist and a wheel, the
# PHP client as a Composer archive, the Helm chart packaged, and SHA256SUMS
# over them all.
# Every artifact carries the version in VERSION; docs/releases.md says how to
# install each, and `make test-dist` installs each into a clean directory and
# runs its quick start against the released binary.
#
# Needs: go, npm, Debian's python3-build, composer, and ./bin/helm and
# ./bin/cyclonedx-gomod (make tools). Environment: VERSION, COMMIT, LDFLAGS,
# BUILD_TAGS and IMAGE_FLAGS as the Makefile sets them.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
version=${VERSION:-$(cat VERSION)}
out=$root/dist/ctxc-$version
rm -rf "$out"
mkdir -p "$out"

step() { printf 'dist: %s\n' "$*"; }

# The linux binaries are the container image's too.
images=$(mktemp -d)
trap 'rm -rf "$images"' EXIT
for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; do
  os=${target%/*} arch=${target#*/}
  step "ctxc for $os/$arch"
  stage=$(mktemp -d)
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -tags "$BUILD_TAGS" -ldflags "$LDFLAGS" -o "$stage/ctxc" ./cmd/ctxc
  # A README of its own: the repository's tour needs make, examples/ and
  # docs/, none of which the archive holds (make test-dist runs its commands).
  sed -e "s/@VERSION@/$version/g" -e "s|@PLATFORM@|$os/$arch|g" scripts/dist-README.md > "$stage/README.md"
  tar -C "$stage" --owner=0 --group=0 --mtime='2000-01-01 00:00Z' -czf "$out/ctxc_${version}_${os}_${arch}.tar.gz" ctxc README.md
  if [[ $os == linux ]]; then cp "$stage/ctxc" "$images/ctxc-$arch"; fi
  rm -rf "$stage"
done

step "software bill of materials (CycloneDX)"
"$root/bin/cyclonedx-gomod" app -json -licenses=false -main cmd/ctxc -output "$out/ctxc_${version}.cdx.json" . 2>/dev/null

# The image's index is written beside it too: its SHA-256 in SHA256SUMS is
# the image's digest. The image joins the bill of materials.
step "container image (OCI image layout, linux/amd64 and linux/arm64)"
# shellcheck disable=SC2086 # IMAGE_FLAGS is a list of flags
CGO_ENABLED=0 go run -trimpath ./internal/imagebuild ${IMAGE_FLAGS:?set by make dist} \
  -binary linux/amd64="$images/ctxc-amd64" -binary linux/arm64="$images/ctxc-arm64" \
  -out "$out/ctxc-${version}-image.oci.tar" -index-out "$out/ctxc-${version}-image.index.json" \
  -sbom "$out/ctxc_${version}.cdx.json"

step "TypeScript client (npm pack)"
(cd clients/typescript && npm ci --no-audit --no-fund --engine-strict --loglevel=error && npm pack --silent --pack-destination "$out" >/dev/null)

step "Python client (sdist and wheel, with Debian's python3-build)"
log=$(mktemp)
if ! /usr/bin/python3 -m build --no-isolation --sdist --wheel --outdir "$out" clients/python >"$log" 2>&1; then
  cat "$log" >&2
  exit 1
fi
rm -f "$log"
rm -rf clients/python/build clients/python/src/*.egg-info

step "PHP client (Composer archive)"
composer archive --quiet --working-dir clients/php --format=zip --dir "$out" --file "ctxc-client-php-$version"

step "Helm chart"
"$root/bin/helm" package deploy/helm/ctxc --destination "$out" >/dev/null

step "checksums"
(cd "$out" && sha256sum -- * > SHA256SUMS)
ls -l "$out"
