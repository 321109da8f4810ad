#!/usr/bin/env bash
# Records the `shell` family: make, bash scripts, coreutils, tar and unzip in the
# shell-reports project, and reading/searching the Go standard library's sources.
#
# Needs: make, bash, coreutils, findutils, grep, tar, gzip, unzip, python3, and Go's
# sources at /usr/local/go/src (for the large outputs).
# Run:   bash internal/eval/corpus/record/shell.sh
source "$(dirname "$0")/lib.sh"

GOSRC=${GOSRC:-/usr/local/go/src}
P=shell-reports
vers() { echo "$1 --version | sed -n 1p"; }

# The copy's file modes as the project means them (whatever the checkout did).
prepare() {
  fresh_project $P
  chmod +x "$CTXC_CORPUS_WORKDIR/$P"/scripts/{deploy,release,rotate_logs}.sh
  chmod -x "$CTXC_CORPUS_WORKDIR/$P/scripts/backup.sh"
}
prepare
export CTXC_CORPUS_KEEP=1

# Failures
record shell make-test-fails $P make "$(vers make)" -- make test
record shell make-nested-fails $P make "$(vers make)" -- make build
record shell make-redirect-fails $P make "$(vers make)" -- make report
record shell command-not-found $P bash "$(vers bash)" -- bash scripts/deploy.sh staging
record shell permission-denied $P bash "$(vers bash)" -- ./scripts/backup.sh
record shell no-such-file $P cat "$(vers cat)" -- cat config/prod.env
record shell set-u-unbound $P bash "$(vers bash)" -- ./scripts/release.sh
record shell syntax-error $P bash "$(vers bash)" -- ./scripts/rotate_logs.sh
record shell tar-not-gzip $P tar "$(vers tar)" -- tar -xzf backups/db-2024-05-01.tar.gz
record shell unzip-not-zip $P unzip "unzip -v | sed -n 1p" -- unzip -o backups/reports-2024-05.zip

# Successes
record shell find-wc-ok $P find "$(vers find)" -- "find . -name '*.py' -not -path './out/*' | sort | xargs wc -l"
record shell du-ok $P du "$(vers du)" -- "du -ah --max-depth=2 . | sort -k2"
unset CTXC_CORPUS_KEEP
record shell cat-large-ok - cat "$(vers cat)" -- cat -n "$GOSRC/strings/strings.go"
record shell grep-noisy-ok - grep "$(vers grep)" -- grep -rn "err" "$GOSRC/encoding/csv/reader.go" "$GOSRC/encoding/csv/writer.go"

refresh_labels shell
