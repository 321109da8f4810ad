#!/usr/bin/env bash
# Measures what docs/performance.md's table quotes about the binary: its
# size, and how long `ctxc serve` takes from exec to answering SERVING on the
# gRPC health check (profiles built; the tokenizers' tables are built right
# after, in the background), over several runs.
#
#   scripts/measure.sh [--runs N] [BINARY]
#
# BINARY defaults to ./bin/ctxc, built first with `make build` (the flags and
# tags users get). --runs 0 reports the size only. Start-up is watched by
# `BINARY health --wait`, started beside the server, which connects again
# every 2 ms until the answer is SERVING: a figure is late by at most that,
# and the probe shares the two cores with the server while both start.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=10
binary=""
while (($#)); do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "scripts/measure.sh: unknown flag $1" >&2; exit 2 ;;
    *) binary="$1"; shift ;;
  esac
done
if [[ -z $binary ]]; then
  make --no-print-directory -s build
  binary=bin/ctxc
fi

bytes=$(stat -c %s "$binary")
awk -v b="$bytes" -v f="$binary" 'BEGIN { printf "binary: %s\nsize: %d bytes (%.1f MB)\n", f, b, b / 1e6 }'
((runs > 0)) || exit 0

dir=$(mktemp -d)
pid=""
cleanup() {
  if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT

times=()
for ((i = 1; i <= runs; i++)); do
  sock="unix://$dir/ctxc-$i.sock"
  start=$(date +%s%N)
  OTEL_TRACES_EXPORTER=none "$binary" serve --listen "$sock" --log-level error 2>"$dir/serve.log" &
  pid=$!
  if ! "$binary" health --wait --addr "$sock" --timeout 60s >/dev/null 2>"$dir/health.log"; then
    echo "scripts/measure.sh: ctxc serve did not reach SERVING:" >&2
    cat "$dir/health.log" "$dir/serve.log" >&2
    exit 1
  fi
  end=$(date +%s%N)
  times+=($(((end - start) / 1000000)))
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
done

printf '%s\n' "${times[@]}" | sort -n | awk -v n="$runs" '
  { t[NR] = $1 }
  END {
    median = (n % 2) ? t[(n + 1) / 2] : (t[n / 2] + t[n / 2 + 1]) / 2
    printf "start-up to SERVING: median %d ms, min %d ms, max %d ms over %d runs\n", median, t[1], t[n], n
  }'
