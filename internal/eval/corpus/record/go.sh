#!/usr/bin/env bash
# Re-records the `go` family of the corpus: go build/vet/test/run/mod, gofmt,
# staticcheck and the ordinary reading commands of a Go session, run on the
# projects testdata/projects/go-*.
#
# Needs: Go 1.26 at /usr/local/go (or on PATH), grep, jq; the Go module proxy
# reachable once, to install staticcheck into $CTXC_CORPUS_WORKDIR/bin (never
# into the repository). Nothing else.
#
# Run:   bash internal/eval/corpus/record/go.sh
# Keep the default CTXC_CORPUS_WORKDIR (/tmp/ctxc-corpus): the outputs name
# files under it, and the labels quote those lines.
source "$(dirname "$0")/lib.sh"

export PATH="$CTXC_CORPUS_WORKDIR/bin:/usr/local/go/bin:$PATH"
# A build cache of our own, emptied on each run, so that `go test` never
# answers "(cached)" from an earlier run and every run prints the same.
export GOCACHE="$CTXC_CORPUS_WORKDIR/go-build-cache"
rm -rf "$GOCACHE"
unset GOFLAGS GOPROXY

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

GOVER='go version'
F=go

if [[ ! -x $CTXC_CORPUS_WORKDIR/bin/staticcheck ]]; then
  GOBIN="$CTXC_CORPUS_WORKDIR/bin" go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
fi

# go-inventory: compile errors in two packages (unused import, undefined name,
# declared and not used, int/int64 and float64/int64 mismatches, missing return).
record $F build-compile-errors go-inventory go "$GOVER" -- 'go build ./...'
record $F test-build-failed go-inventory go "$GOVER" -- 'go test ./...'
record $F vet-type-error go-inventory go "$GOVER" -- 'go vet ./internal/pricing/'
record $F list-packages go-inventory go "$GOVER" -- 'go list ./...'
record $F cat-store-file go-inventory cat 'cat --version | sed -n 1p' -- 'cat -n internal/store/store.go'

# go-csvreport: a type renamed in one file only: more than ten errors.
record $F build-too-many-errors go-csvreport go "$GOVER" -- 'go build ./...'

# go-notify: vet findings (printf, copylocks, struct tag, unreachable), the
# vet checks `go test` runs, staticcheck, an unformatted file.
record $F vet-findings go-notify go "$GOVER" -- 'go vet ./...'
record $F test-vet-printf go-notify go "$GOVER" -- 'go test ./...'
record $F staticcheck go-notify staticcheck 'staticcheck -version' -- 'staticcheck ./...'
# notify/senders.go is unformatted on purpose (this recording lists it, and
# the line numbers of the others depend on it): make lint skips testdata.
record $F gofmt-list-unformatted go-notify gofmt "$GOVER" -- 'gofmt -l .'

# go-ratelimit: an off-by-one in the token bucket fails several tests and
# table-driven subtests; one test of six fails in the window package.
record $F test-fail-subtests go-ratelimit go "$GOVER" -- 'go test ./...'
record $F test-verbose-one-fails go-ratelimit go "$GOVER" -- 'go test -v ./window/'
record $F test-run-table go-ratelimit go "$GOVER" -- "go test -v -run 'TestReserve|TestAllowN' ./limiter/"

# go-metrics: a histogram updated outside the registry's lock.
record $F test-race go-metrics go "$GOVER" -- 'go test -race ./...'
refresh_volatile $F test-race

# go-ledger: panics (index out of range, custom panic, nil pointer, nil map).
record $F run-index-panic go-ledger go "$GOVER" -- 'go run ./cmd/ledger testdata/march.csv'
record $F run-custom-panic go-ledger go "$GOVER" -- 'go run ./cmd/ledger -strict testdata/april.csv'
record $F test-nil-pointer go-ledger go "$GOVER" -- 'go test ./...'
record $F test-nil-map go-ledger go "$GOVER" -- 'go test -run TestMerge ./ledger/'
record $F build-gcflags-m go-ledger go "$GOVER" -- 'go build -gcflags=-m ./...'
record $F grep-errorf go-ledger grep 'grep --version | sed -n 1p' -- 'grep -rn "Errorf" .'
record $F test-verbose-parse-pass go-ledger go "$GOVER" -- "go test -v -run 'TestParse' ./ledger/"

# go-pipeline: a worker pool that waits before draining its results.
record $F run-deadlock go-pipeline go "$GOVER" -- 'go run .'
record $F test-timeout go-pipeline go "$GOVER" -- 'go test -timeout 5s ./...'

# go-retry: a passing verbose run whose logs say "failed", "error", "503".
record $F test-verbose-pass go-retry go "$GOVER" -- 'go test -v ./...'
record $F env go-retry go "$GOVER" -- 'go env'

# go-shorturl: modules that are not there, offline.
record $F build-missing-module go-shorturl go "$GOVER" -- 'go build ./...'
record $F mod-tidy-offline go-shorturl go "$GOVER" -- 'GOPROXY=off go mod tidy'
record $F get-offline go-retry go "$GOVER" -- 'GOFLAGS=-mod=mod GOPROXY=off go get example.com/nope'

# go-config: a missing comma in a composite literal.
record $F build-syntax-error go-config go "$GOVER" -- 'go build ./...'
record $F gofmt-syntax-error go-config gofmt "$GOVER" -- 'gofmt -l .'

# Reading the standard library, as an agent does to learn an API.
record $F cat-stdlib-client - cat 'cat --version | sed -n 1p' -- 'cat -n "$(go env GOROOT)/src/net/http/client.go"'
record $F sed-stdlib-cookie - sed 'sed --version | sed -n 1p' -- "sed -n '1,300p' \"\$(go env GOROOT)/src/net/http/cookie.go\""
record $F grep-stdlib-client - grep 'grep --version | sed -n 1p' -- 'grep -rn "func (c \*Client)" "$(go env GOROOT)/src/net/http/"'
record $F doc-http-client - go "$GOVER" -- 'go doc net/http.Client'
