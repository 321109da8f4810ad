#!/usr/bin/env bash
# Copies the day's reports to backups/, one tarball a day.
set -euo pipefail
day=$(date +%F)
tar -czf "backups/reports-${day}.tar.gz" out/
echo "backed up out/ to backups/reports-${day}.tar.gz"
