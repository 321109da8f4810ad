#!/usr/bin/env bash
# Records the `typescript` family: tsc (5.9 and the native 7.0), ESLint 10 with
# a flat config and typescript-eslint, Jest 30 with ts-jest, Vitest 4 and tsx,
# run on the ts-* projects in testdata/projects.
#
# Needs: node 20 and npm (Debian's nodejs/npm or the image's), jq, and the npm
# registry. Every npm package is installed by `npm ci` from the project's
# package-lock.json into the work-dir copy ($CTXC_CORPUS_WORKDIR, default
# /tmp/ctxc-corpus), never into the repository.
#
# Run: bash internal/eval/corpus/record/typescript.sh   (from anywhere; takes 5-10 min)
# Run it alone, not beside javascript.sh: both use the same work directory.
# Stack traces and ESLint's file headers hold the work-dir path, so keep the
# default CTXC_CORPUS_WORKDIR for outputs that match the committed ones.
source "$(dirname "$0")/lib.sh"

# An agent's shell tool has no terminal. Vitest colours its output unless TERM
# is dumb (even without a tty), so TERM is fixed here; one case sets it back.
export TERM=dumb
export npm_config_update_notifier=false
export CTXC_CORPUS_KEEP=1

# setup PROJECT: a fresh copy with its dependencies installed.
setup() {
  fresh_project "$1"
  (cd "$CTXC_CORPUS_WORKDIR/$1" && npm ci --no-audit --no-fund >/dev/null 2>&1) || {
    echo "npm ci failed in $1" >&2
    exit 1
  }
}

v() { echo "cd \"\$CTXC_CORPUS_WORKDIR/$1\" && $2"; }

# --- tsc 5.9 on ts-inventory: ten errors in four files --------------------
setup ts-inventory
TSC=$(v ts-inventory 'npx tsc --version')
record typescript tsc-errors-plain ts-inventory tsc "$TSC" -- npx tsc --noEmit --pretty false
record typescript tsc-errors-pretty ts-inventory tsc "$TSC" -- npx tsc --noEmit --pretty
record typescript tsc-npm-run-typecheck ts-inventory tsc "$TSC" -- npm run typecheck
record typescript tsc-errors-listfiles ts-inventory tsc "$TSC" -- npx tsc --noEmit --pretty false --listFiles
record typescript cat-lib-es5-head ts-inventory cat 'cat --version' -- 'cat -n node_modules/typescript/lib/lib.es5.d.ts | head -n 900'

# --- tsc 7 (native) on ts-billing: repeated null checks, chained messages --
setup ts-billing
TSC7=$(v ts-billing 'npx tsc --version')
record typescript tsc7-errors-plain ts-billing tsc "$TSC7" -- npx tsc --noEmit --pretty false
record typescript tsc7-errors-pretty ts-billing tsc "$TSC7" -- npx tsc -p . --pretty

# --- ts-ratelimit: clean tsc, Vitest, tsx --------------------------------
setup ts-ratelimit
TSC=$(v ts-ratelimit 'npx tsc --version')
VITEST=$(v ts-ratelimit 'npx vitest --version')
TSX=$(v ts-ratelimit 'npx tsx --version')
record typescript tsc-clean ts-ratelimit tsc "$TSC" -- npx tsc --noEmit
record typescript tsc-clean-extended-diagnostics ts-ratelimit tsc "$TSC" -- npx tsc --noEmit --extendedDiagnostics
record typescript tsc-show-config ts-ratelimit tsc "$TSC" -- npx tsc --showConfig
record typescript tsc-missing-project ts-ratelimit tsc "$TSC" -- npx tsc --noEmit -p tsconfig.build.json
record typescript vitest-failing ts-ratelimit vitest "$VITEST" -- npx vitest run
TERM=xterm-256color record typescript vitest-failing-colour ts-ratelimit vitest "$VITEST" -- npm test
record typescript vitest-pass-verbose ts-ratelimit vitest "$VITEST" -- "npx vitest run --reporter=verbose tests/sliding-window.test.ts tests/config.test.ts -t 'SlidingWindow|parseConfig'"
record typescript tsx-error-with-cause ts-ratelimit tsx "$TSX" -- npx tsx src/cli.ts config/limits.staging.json
record typescript tsx-typeerror ts-ratelimit tsx "$TSX" -- npx tsx src/cli.ts config/limits.legacy.json
record typescript tsx-ok ts-ratelimit tsx "$TSX" -- npx tsx src/cli.ts
record typescript grep-refill ts-ratelimit grep 'grep --version' -- grep -rn "refillPerSecond" src tests

# --- ts-csv: Jest with ts-jest --------------------------------------------
setup ts-csv
JEST=$(v ts-csv 'npx jest --version')
record typescript jest-npm-test-failing ts-csv jest "$JEST" -- npm test -- --ci
record typescript jest-snapshot-mismatch ts-csv jest "$JEST" -- "npx jest --ci tests/summary.test.ts -t 'renders a report'"
record typescript jest-one-of-many ts-csv jest "$JEST" -- npx jest tests/schema.test.ts
record typescript jest-pass-coverage ts-csv jest "$JEST" -- "npx jest --coverage tests/parser.test.ts -t '^parse '"

# --- ts-webhooks: ESLint 10 flat config ------------------------------------
setup ts-webhooks
ESLINT=$(v ts-webhooks 'npx eslint --version')
record typescript eslint-stylish ts-webhooks eslint "$ESLINT" -- npx eslint .
# ESLint 10 no longer ships the unix formatter: first what that says, then with it installed.
record typescript eslint-unix-formatter-missing ts-webhooks eslint "$ESLINT" -- npx eslint . --format unix
(cd "$CTXC_CORPUS_WORKDIR/ts-webhooks" && npm install -D eslint-formatter-unix@9.0.1 --no-audit --no-fund >/dev/null 2>&1)
record typescript eslint-unix ts-webhooks eslint "$ESLINT" -- npx eslint . --format unix
record typescript eslint-warnings-only ts-webhooks eslint "$ESLINT" -- npx eslint src/retry.ts
record typescript eslint-max-warnings ts-webhooks eslint "$ESLINT" -- npx eslint --max-warnings 0 src/retry.ts
record typescript eslint-json ts-webhooks eslint "$ESLINT" -- npx eslint src/dispatcher.ts --format json
record typescript eslint-unknown-rule ts-webhooks eslint "$ESLINT" -- "npx eslint --rule '{\"no-floating-promises\": \"error\"}' src"
record typescript cat-dispatcher ts-webhooks cat 'cat --version' -- cat -n src/dispatcher.ts
# The downgrade that javascript.sh records (npm install -D eslint@8), then the lint it breaks.
(cd "$CTXC_CORPUS_WORKDIR/ts-webhooks" && npm install -D eslint@8 --no-audit --no-fund >/dev/null 2>&1)
record typescript eslint8-after-downgrade ts-webhooks eslint "$(v ts-webhooks 'npx eslint --version')" -- npx eslint .
