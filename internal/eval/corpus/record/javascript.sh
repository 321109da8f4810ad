#!/usr/bin/env bash
# Records the `javascript` family: node 20 runtime errors, node's test runner
# (TAP and spec reporters, through npm test), npm install/ci/run/ls/outdated
# successes and failures answered by the real npm registry, and reading files
# of a project and of node_modules, on the js-* projects in testdata/projects
# (and two ts-* ones for npm ci and a peer-dependency downgrade).
#
# Needs: node 20 and npm (Debian's nodejs/npm or the image's), jq, grep, and
# the npm registry. Packages are installed from each project's
# package-lock.json into the work-dir copy ($CTXC_CORPUS_WORKDIR, default
# /tmp/ctxc-corpus), never into the repository.
#
# Run: bash internal/eval/corpus/record/javascript.sh   (from anywhere; takes ~3 min)
# Run it alone, not beside typescript.sh: both use the same work directory.
# Stack traces hold the work-dir path, so keep the default CTXC_CORPUS_WORKDIR
# for outputs that match the committed ones. The npm registry's answers
# (E404, ETARGET, npm outdated's "Latest") are as of the day of recording.
source "$(dirname "$0")/lib.sh"

export TERM=dumb
export npm_config_update_notifier=false
export CTXC_CORPUS_KEEP=1

NODE='node --version'
NPM='npm --version'

# --- js-orders: runtime errors, node --test, npm run/ls/outdated -----------
fresh_project js-orders
record javascript npm-install-ok js-orders npm "$NPM" -- npm install
record javascript node-typeerror-undefined js-orders node "$NODE" -- node scripts/import-orders.js data/orders.json
record javascript node-error-cause-json js-orders node "$NODE" -- node scripts/import-orders.js data/orders-truncated.json
record javascript node-error-cause-validation js-orders node "$NODE" -- node scripts/import-orders.js data/orders-2024-05-15.json
record javascript npm-run-module-not-found js-orders npm "$NPM" -- npm run report
record javascript node-referenceerror js-orders node "$NODE" -- node scripts/daily-summary.js
record javascript node-unhandled-rejection js-orders node "$NODE" -- node scripts/reserve.js
record javascript node-syntaxerror-caret js-orders node "$NODE" -- node scripts/price.js 49.90 SPRING10
# Nothing listens on 127.0.0.1:58081: the fetch is refused on loopback.
record javascript node-fetch-refused js-orders node "$NODE" -- node scripts/sync-prices.js
record javascript npm-test-tap-failing js-orders node "$NODE" -- npm test
record javascript node-test-spec-failing js-orders node "$NODE" -- node --test --test-reporter=spec
record javascript node-test-one-file js-orders node "$NODE" -- node --test test/money.test.js
record javascript npm-test-pass js-orders node "$NODE" -- npm test -- test/tax.test.js test/importer.test.js
record javascript npm-run-missing-script js-orders npm "$NPM" -- npm run lint
record javascript npm-ls js-orders npm "$NPM" -- npm ls
record javascript npm-ls-all js-orders npm "$NPM" -- npm ls --all
record javascript npm-outdated js-orders npm "$NPM" -- npm outdated
record javascript cat-express-response js-orders cat 'cat --version' -- cat -n node_modules/express/lib/response.js
record javascript grep-shipping js-orders grep 'grep --version' -- grep -rn "shipping" src scripts test

# --- js-notifier: package.json ahead of its lock file -----------------------
fresh_project js-notifier
record javascript node-cannot-find-package js-notifier node "$NODE" -- node src/reminders.js
record javascript npm-ci-out-of-sync js-notifier npm "$NPM" -- npm ci
record javascript npm-install-e404 js-notifier npm "$NPM" -- npm install express-async-validatorz
record javascript npm-install-etarget js-notifier npm "$NPM" -- npm install express@4.99.0

# --- js-storefront: react 17 with react-dom 18 ------------------------------
fresh_project js-storefront
record javascript node-require-missing js-storefront node "$NODE" -- node src/render.js
record javascript npm-install-eresolve js-storefront npm "$NPM" -- npm install

# --- two TypeScript projects' installs --------------------------------------
fresh_project ts-csv
record javascript npm-ci-install-scripts ts-csv npm "$NPM" -- npm ci
fresh_project ts-webhooks
(cd "$CTXC_CORPUS_WORKDIR/ts-webhooks" && npm ci --no-audit --no-fund >/dev/null 2>&1)
record javascript npm-install-peer-override ts-webhooks npm "$NPM" -- npm install -D eslint@8
