#!/usr/bin/env bash
# Records the `shell` family: make, bash scripts, coreutils, tar and unzip in the
# shell-reports project, and reading/searching the Go standard library's sources.
#
# Needs: make, bash, coreutils, findutils, grep, tar, gzip, unzip, python3, and Go's
# sources at /usr/local/go/src (for the large outputs).
# Run:   bash eval/corpus/record/shell.sh
source "$(dirname "$0")/lib.sh"
# refresh_labels FAMILY: a labelled line that a new recording printed with other
# numbers (a timestamp, a pid, milliseconds) is replaced by the line that differs
# from it only in its digits; a label with no such line is reported and left alone.
refresh_labels() {
  python3 - "$CORPUS_DIR/recorded/$1" <<'PY'
import json, os, re, sys
d = sys.argv[1]
mask = lambda s: re.sub(r"\s+", " ", re.sub(r"[0-9]+", "0", s))
for name in sorted(os.listdir(d)):
    if not name.endswith(".json"):
        continue
    path = os.path.join(d, name)
    meta = json.load(open(path))
    lines = [l.strip() for l in open(path[:-5] + ".out", encoding="utf-8", errors="replace").read().split("\n")]
    changed = False
    for field in ("identifying", "generic", "trouble"):
        for i, label in enumerate(meta.get(field) or []):
            if label in lines:
                continue
            same = [l for l in lines if mask(l) == mask(label)]
            if same:
                meta[field][i] = same[0]
                changed = True
            else:
                print(f"{name}: {field}[{i}] is no longer printed: {label!r}", file=sys.stderr)
    if changed:
        with open(path, "w") as f:
            json.dump(meta, f, indent=2, ensure_ascii=False)
            f.write("\n")
PY
}

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
