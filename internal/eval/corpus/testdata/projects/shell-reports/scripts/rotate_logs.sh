#!/usr/bin/env bash
# Compresses report logs older than a day and deletes those older than 30 days.
set -euo pipefail
cd "$(dirname "$0")/../logs"

for f in *.log; do
  [ -e "$f" ] || continue
  age_days=$(( ($(date +%s) - $(stat -c %Y "$f")) / 86400 ))
  if [ "$age_days" -gt 30 ]; then
    rm -f -- "$f"
  elif [ "$age_days" -gt 1 ]; then
    gzip -9 -- "$f"
  fi
done

for f in *.log.gz; do
  if [ -e "$f" ] && [ "$(( ($(date +%s) - $(stat -c %Y "$f")) / 86400 ))" -gt 30 ]
    rm -f -- "$f"
  fi
done
echo "logs rotated"
