#!/usr/bin/env bash
# make test-fresh: the README's `make test` as a new user's first run is: in a
# clean clone of HEAD (nothing uncommitted, no ./bin) with empty Go build,
# Go module and npm caches, so every tool is built, every module downloaded
# and every npm package fetched. It fails when make test fails, and when its
# output is ever silent for more than 30 s (scripts/silence-watch.sh names
# the phase), so that a cold run always says what it is doing. 5 to 6
# minutes on two cores (11 to 14 on a host whose first build of ./bin/ctxc
# took twice the CPU); the Debian packages are scripts/deps.sh's as usual.
#
# TEST_FRESH_KEEP=1 keeps the clone and caches (their directory is printed).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/ctxc-fresh.XXXXXX")
if [[ ${TEST_FRESH_KEEP:-} != 1 ]]; then
  trap 'rm -rf "$work"' EXIT
fi
echo "test-fresh: a clean clone of $(git rev-parse --short HEAD) with empty caches in $work"
git clone --quiet . "$work/ctxc"

# Empty caches of the clone's own; -modcacherw so that the module cache
# (read-only by default) can be removed.
export GOCACHE=$work/cache/go-build GOMODCACHE=$work/cache/go-mod npm_config_cache=$work/cache/npm
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw"
cd "$work/ctxc"
scripts/silence-watch.sh 30 make test
