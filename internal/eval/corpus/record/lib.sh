# Shared by the record scripts: source it, then call `record` once a case.
#
#   record FAMILY CASE PROJECT TOOL VERSION_CMD -- COMMAND...
#
# copies testdata/projects/PROJECT (or nothing, for "-") into a fresh
# $CTXC_CORPUS_WORKDIR/PROJECT, runs COMMAND there with bash -c, its stdout
# and stderr combined as an agent's shell tool sees them, and writes
# recorded/FAMILY/CASE.out byte for byte. recorded/FAMILY/CASE.json keeps its
# hand-written labels: only command, exit_code, version and tool are
# rewritten (a new case gets a skeleton whose labels are to be written by
# reading the output). Set CTXC_CORPUS_KEEP=1 to run several commands in the
# same copy (the project is copied only when its directory does not exist).
set -euo pipefail

CORPUS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CTXC_CORPUS_WORKDIR="${CTXC_CORPUS_WORKDIR:-/tmp/ctxc-corpus}"
mkdir -p "$CTXC_CORPUS_WORKDIR"

# fresh_project PROJECT: a clean copy of the project in the work directory.
fresh_project() {
  local project=$1
  rm -rf "${CTXC_CORPUS_WORKDIR:?}/$project"
  cp -a "$CORPUS_DIR/testdata/projects/$project" "$CTXC_CORPUS_WORKDIR/$project"
}

record() {
  local family=$1 case=$2 project=$3 tool=$4 version_cmd=$5
  shift 5
  [[ ${1:-} == -- ]] && shift
  local cmd="$*"
  local dir="$CTXC_CORPUS_WORKDIR"
  if [[ $project != - ]]; then
    if [[ ${CTXC_CORPUS_KEEP:-0} != 1 || ! -d $CTXC_CORPUS_WORKDIR/$project ]]; then
      fresh_project "$project"
    fi
    dir="$CTXC_CORPUS_WORKDIR/$project"
  fi
  local out="$CORPUS_DIR/recorded/$family/$case"
  mkdir -p "$(dirname "$out")"
  local code=0
  (cd "$dir" && bash -c "$cmd") >"$out.out" 2>&1 </dev/null || code=$?
  local version
  version="$(bash -c "$version_cmd" 2>&1 | sed -n 1p | tr -d '\r')"
  local proj=""
  [[ $project != - ]] && proj=$project
  if [[ -f $out.json ]]; then
    jq --arg tool "$tool" --arg version "$version" --arg command "$cmd" --argjson code "$code" \
      '.tool = $tool | .version = $version | .command = $command | .exit_code = $code' "$out.json" >"$out.json.tmp"
    mv "$out.json.tmp" "$out.json"
  else
    jq -n --arg family "$family" --arg tool "$tool" --arg version "$version" --arg project "$proj" \
      --arg command "$cmd" --argjson code "$code" \
      '{family: $family, tool: $tool, version: $version, project: $project, command: $command,
        exit_code: $code, failed: ($code != 0), identifying: [], generic: [], trouble: [], description: ""}' >"$out.json"
  fi
  printf '%-40s exit %d, %d lines\n' "$family/$case" "$code" "$(wc -l <"$out.out")"
}

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
