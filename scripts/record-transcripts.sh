#!/usr/bin/env bash
# Records again the real agents' transcripts of examples/transcripts/ that
# `ctxc eval` reads and docs/measuring.md quotes: Claude Code and Codex CLI, headless,
# and a small agent on the openai SDK, each run against the scripted model of
# internal/scriptedmodel on a fresh copy of examples/transcripts/workspace (a Go
# module with real bugs) at /tmp/ctxc-record. internal/transcriptrecorder holds
# the model's script and writes the files.
#
#   scripts/record-transcripts.sh                      every session
#   scripts/record-transcripts.sh codex-12,openai-chat  only these (claude-code-12,
#                                                       claude-code-40, codex-12,
#                                                       codex-40, openai-chat)
#
# Needs Go, git, Node 20+ with npm and the npm registry: it runs `npm ci` in
# examples/transcripts/recorder (@anthropic-ai/claude-code with its platform
# binary, @openai/codex, openai, pinned by the package-lock.json there). It is
# not part of `make test`; it takes a few minutes per 40-turn session on two
# cores. It then rewrites the transcript blocks of docs/measuring.md from what `ctxc eval`
# prints for the new recordings; review the diff, and run go test ./eval
# ./cmd/ctxc.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
(cd examples/transcripts/recorder && npm ci --no-audit --no-fund)
go run ./internal/transcriptrecorder -root . ${1:+-only "$1"}
go test -count=1 ./cmd/ctxc -run TestGuideEvalBlocks -update
