#!/usr/bin/env bash
# The Debian packages that the tests and the README's commands need: the one
# list, used by `make deps` (and so by `make test`) and by .ci/run.
#
#   scripts/deps.sh          install what is missing (as root, or with sudo
#                            when it needs no password); otherwise print the
#                            one command that does, and fail
#   scripts/deps.sh --check  only say what is missing (exit 1 if anything is)
#   scripts/deps.sh --list   print the list
set -euo pipefail

PACKAGES=(
  jq # the README's session commands chain Route answers with it
  curl # the README's HTTP/JSON commands
  php-cli # the PHP client example (plain HTTP/JSON) and its integration test
  # The Python sidecar example and its integration test: Debian's grpcio for
  # Debian's /usr/bin/python3, and protoc with the gRPC Python plugin and the
  # well-known types (libprotobuf-dev) to generate its stubs at build time.
  python3-grpcio
  python3-protobuf
  protobuf-compiler
  protobuf-compiler-grpc
  libprotobuf-dev
  # The summary cache's tests start a real Redis and kill it mid-test.
  redis-server
  # The client packages' tests (make test-clients): the PHP package over curl
  # with Debian's PHPUnit and Composer's autoloader, and the TypeScript
  # package with Node (npm comes with it).
  php-curl
  phpunit
  composer
  nodejs
  # promtool checks and unit-tests the alert rules and parses the dashboard's
  # queries (deploy/); Debian ships it in the prometheus package.
  prometheus
  # The inspector page's browser test drives Debian's headless Chromium
  # (integration/inspector_test.go); the page's text is set in DejaVu.
  chromium
  fonts-dejavu-core
  # make dist builds the Python client's sdist and wheel with Debian's build
  # frontend and the PHP client's Composer archive (zip); make test-dist
  # installs them as docs/releases.md says, in a venv that sees Debian's
  # grpcio.
  python3-build
  python3-venv
  python3-setuptools
  python3-wheel
  php-zip
  # make image and make dist put its CA bundle in the container image.
  ca-certificates
  # The multi-replica test puts nginx (grpc_pass) in front of three servers:
  # the L7 gRPC load balancing the README's "Deploying" describes.
  nginx
)

mode=install
case "${1:-}" in
  "") ;;
  --check) mode=check ;;
  --list) printf '%s\n' "${PACKAGES[@]}"; exit 0 ;;
  *) echo "usage: $0 [--check|--list]" >&2; exit 2 ;;
esac

if ! command -v dpkg-query >/dev/null; then
  echo "scripts/deps.sh: not a Debian system; install the equivalents of: ${PACKAGES[*]}" >&2
  exit 1
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
((${#missing[@]} == 0)) && exit 0

install=(apt-get install -y --no-install-recommends "${missing[@]}")
if [[ $mode == check ]]; then
  echo "missing Debian packages: ${missing[*]}; as root run: apt-get update && ${install[*]}" >&2
  exit 1
fi
# apt waits up to 10 minutes for a dpkg lock held by another apt (a fresh
# machine's unattended upgrades, another terminal) rather than failing at once.
export wait_lock=DPkg::Lock::Timeout=600
# apt_update SUDO...: apt-get update. Debian 12's apt does not wait for the
# package lists' lock (another apt-get update holds it) as it does for
# dpkg's, so this tries again every 5 s for up to 10 minutes.
apt_update() {
  local deadline=$((SECONDS + 600)) out
  while ! out=$("$@" apt-get -o "$wait_lock" update -qq 2>&1); do
    if [[ $out != *"Could not get lock"* ]] || ((SECONDS >= deadline)); then
      printf '%s\n' "$out" >&2
      return 1
    fi
    printf 'waiting for the lock on the package lists: %s\n' "${out%%$'\n'*}"
    sleep 5
  done
  [[ -z $out ]] || printf '%s\n' "$out"
}

sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if ! command -v sudo >/dev/null || ! sudo -n true 2>/dev/null; then
    echo "missing Debian packages: ${missing[*]}; as root run: apt-get update && ${install[*]} (or: sudo scripts/deps.sh)" >&2
    exit 1
  fi
  sudo=(sudo -n)
fi
# Each a phase with its time: a cold install takes minutes. The environment
# goes through env, as sudo would drop it.
phase=$(dirname "${BASH_SOURCE[0]}")/phase.sh
export -f apt_update
"$phase" "apt-get update, for the missing Debian packages: ${missing[*]}" bash -c 'apt_update "$@"' apt_update "${sudo[@]}"
"$phase" "apt-get install: ${missing[*]}" "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o "$wait_lock" "${install[@]:1}"
