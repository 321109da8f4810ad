#!/usr/bin/env bash
# Re-records the `rust` family of the corpus: cargo build/run/test/clippy/fmt
# and cargo's offline failures (no crates registry here), on the projects
# testdata/projects/rust-*.
#
# Needs: rustc and cargo 1.95 with the clippy and rustfmt components (rustup),
# jq. No crate is downloaded: the projects use the standard library only, and
# the registry cases record cargo failing to reach it.
#
# Run:   bash internal/eval/corpus/record/rust.sh
# Keep the default CTXC_CORPUS_WORKDIR (/tmp/ctxc-corpus): the outputs name
# files under it, and the labels quote those lines.
source "$(dirname "$0")/lib.sh"

# Backtraces only where a command asks for them.
unset RUST_BACKTRACE RUST_LOG CARGO_TARGET_DIR

# refresh_volatile FAMILY CASE: a label that is no longer a line of the new
# output because only a process id, a thread id, an address or a duration in
# it changed is replaced by the first line of the new output that differs
# from it in those numbers alone (labels stay as written otherwise).
refresh_volatile() {
  local json="$CORPUS_DIR/recorded/$1/$2.json" out="$CORPUS_DIR/recorded/$1/$2.out"
  jq --rawfile out "$out" '
    def norm: gsub("0x[0-9a-fA-F]+"; "0x_") | gsub("==[0-9]+=="; "==_==")
      | gsub("^bash: line (?<l>[0-9]+): +[0-9]+ "; "bash: line \(.l): _ ")
      | gsub("\\) \\([0-9]+\\) panicked"; ") (_) panicked") | gsub("'"'"' \\([0-9]+\\) panicked"; "'"'"' (_) panicked")
      | gsub("[0-9]+\\.[0-9]+s\\b"; "_s");
    ($out | split("\n") | map(gsub("^\\s+|\\s+$"; ""))) as $lines
    | ($lines | map({(.): true}) | add // {}) as $set
    | def fix: if $set[.] then . else (norm as $n | [$lines[] | select(norm == $n)]) as $c
        | if ($c | length) > 0 then $c[0] else . end end;
    reduce ("identifying", "generic", "trouble") as $k (.; if .[$k] then .[$k] |= map(fix) else . end)
  ' "$json" >"$json.tmp" && mv "$json.tmp" "$json"
}

CARGO='cargo --version'
F=rust

# rust-inventory: E0425 (misspelt variable), E0308 (u32 * u64, String passed
# as u32), E0277, E0382 (use after a partial move), an unused import.
record $F build-errors rust-inventory cargo "$CARGO" -- 'cargo build'

# rust-shapes: E0599 (method not in the trait, HashSet bounds), E0277 (Eq,
# Hash, Copy, PartialOrd not implemented).
record $F build-trait-errors rust-shapes cargo "$CARGO" -- 'cargo build'

# rust-orders: builds with a dead-code warning, then panics on `2 boxes`.
record $F build-warnings rust-orders cargo "$CARGO" -- 'cargo build'
record $F run-panic-backtrace rust-orders cargo "$CARGO" -- 'RUST_BACKTRACE=1 cargo run -- data/orders.csv'
refresh_volatile $F run-panic-backtrace
record $F run-panic rust-orders cargo "$CARGO" -- 'cargo run -q -- data/orders.csv'
refresh_volatile $F run-panic

# rust-slug: two of six unit tests fail (assert_eq! on a typographic
# apostrophe, assert! with a message on truncation).
record $F test-assert-failed rust-slug cargo "$CARGO" -- 'cargo test'
refresh_volatile $F test-assert-failed

# rust-wordcount: tests pass (their text says "error" and "failed"); clippy
# lints; code not rustfmt-formatted; a crate to add with no registry.
record $F test-pass rust-wordcount cargo "$CARGO" -- 'cargo test'
record $F clippy-deny-warnings rust-wordcount cargo 'cargo clippy --version' -- 'cargo clippy -- -D warnings'
record $F fmt-check rust-wordcount cargo 'cargo fmt --version' -- 'cargo fmt --check'
record $F add-offline rust-wordcount cargo "$CARGO" -- 'cargo add serde --features derive'

# rust-httpcheck: a dependency that cannot be fetched.
record $F build-registry-unreachable rust-httpcheck cargo "$CARGO" -- 'cargo build'
record $F build-offline rust-httpcheck cargo "$CARGO" -- 'cargo build --offline'

record $F run-stdin rust-wordcount cargo "$CARGO" -- 'cargo run -q < src/lib.rs'

# No project: reading an error's explanation.
record $F explain-e0382 - rustc 'rustc --version' -- 'rustc --explain E0382'
