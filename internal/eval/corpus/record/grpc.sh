#!/usr/bin/env bash
# Records the `grpc` family: grpcurl against a real ctxc server on loopback.
#
# Needs: Go (/usr/local/go) to build grpcurl v1.9.4 and, if /work/main/bin/ctxc is
# missing, ctxc itself, both into $CTXC_CORPUS_WORKDIR/grpc-tools/bin (never into the repo); jq,
# python3 (standard library).
# Run:   bash internal/eval/corpus/record/grpc.sh
# It starts slow_llm.py (testdata/projects/grpc-ctxc-client) on 127.0.0.1:39412 and
# `ctxc serve --listen 127.0.0.1:39411 --config ctxc.yaml`, and stops both on exit.
# Port 39419 stays closed.
source "$(dirname "$0")/lib.sh"


REPO="$(cd "$CORPUS_DIR/../.." && pwd)"
BIN="$CTXC_CORPUS_WORKDIR/grpc-tools/bin"
mkdir -p "$BIN"
export PATH="$BIN:$PATH"
GO=${GO:-/usr/local/go/bin/go}
# stamped with its version as grpcurl's release builds are, so `grpcurl -version` names it
if [[ "$("$BIN/grpcurl" -version 2>&1)" != "grpcurl v1.9.4" ]]; then
  (cd "$CTXC_CORPUS_WORKDIR" && GOBIN="$BIN" "$GO" install -ldflags "-X main.version=v1.9.4" \
    github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.4)
fi
CTXC="$REPO/bin/ctxc"
if [[ ! -x $CTXC ]]; then
  CTXC="$BIN/ctxc"
  (cd "$REPO" && "$GO" build -tags grpcnotrace -o "$CTXC" ./cmd/ctxc)
fi

PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_port() {
  for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done
  echo "port $1 did not open" >&2; return 1
}
for p in 39411 39412 39419; do
  port_free "$p" || { echo "port $p is in use" >&2; exit 1; }
done

export CTXC_CORPUS_KEEP=1
P=grpc-ctxc-client
fresh_project $P
SRV="$CTXC_CORPUS_WORKDIR/$P"
(cd "$SRV" && exec python3 slow_llm.py 39412 2>slow_llm.log) &
PIDS+=($!)
(cd "$SRV" && exec "$CTXC" serve --listen 127.0.0.1:39411 --config ctxc.yaml 2>ctxc.log) &
PIDS+=($!)
wait_port 39412; wait_port 39411

V="grpcurl -version"
A=127.0.0.1:39411
S=ctxc.v1.ContextCompilerService

# Failures
record grpc closed-port $P grpcurl "$V" -- grpcurl -plaintext 127.0.0.1:39419 list
record grpc invalid-argument-fields $P grpcurl "$V" -- "grpcurl -plaintext -d @ $A $S/Compile < requests/compile-invalid.json"
record grpc invalid-argument-profile $P grpcurl "$V" -- "grpcurl -plaintext -d @ $A $S/Compile < requests/compile-typo-profile.json"
record grpc request-unknown-field $P grpcurl "$V" -- "grpcurl -plaintext -d @ $A $S/Compile < requests/compile-bad-option.json"
record grpc health-not-found $P grpcurl "$V" -- "grpcurl -plaintext -d '{\"service\": \"ctxc.v2.ContextCompilerService\"}' $A grpc.health.v1.Health/Check"
record grpc unimplemented $P grpcurl "$V" -- \
  "grpcurl -plaintext -import-path protos -proto ctxc/v1/summarize.proto -d '{\"text\": \"long build log...\", \"max_tokens\": 256}' $A $S/Summarize"
record grpc method-not-exposed $P grpcurl "$V" -- "grpcurl -plaintext -d '{\"text\": \"long build log...\", \"max_tokens\": 256}' $A $S/Summarize"
record grpc deadline-exceeded $P grpcurl "$V" -- \
  "grpcurl -plaintext -max-time 2 -d '{\"service\": \"ctxc.v1.ContextCompilerService\"}' $A grpc.health.v1.Health/Watch"
record grpc unavailable-backend $P grpcurl "$V" -- "grpcurl -plaintext -max-time 3 -d @ $A $S/Compile < requests/compile-coder.json"

# Successes
record grpc list-ok $P grpcurl "$V" -- grpcurl -plaintext $A list
record grpc describe-ok $P grpcurl "$V" -- grpcurl -plaintext $A describe ctxc.v1.CompileOptions
record grpc compile-ok $P grpcurl "$V" -- "grpcurl -plaintext -d @ $A $S/Compile < requests/compile-chat.json"

refresh_labels grpc
