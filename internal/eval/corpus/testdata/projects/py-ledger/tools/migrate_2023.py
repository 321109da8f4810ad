#!/usr/bin/env python3
"""One-off: convert the 2023 chart of accounts (semicolon CSV) to data/accounts.csv."""
import csv
import sys

OLD_TO_NEW = {"100": "1000", "120": "1200", "400": "4000", "600": "6000"}


def migrate(src, dst):
    rows = []
    with open(src, newline="", encoding="latin-1") as fh:
        for code, name in csv.reader(fh, delimiter=";"):
            rows.append((OLD_TO_NEW.get(code, code), name.strip()
    with open(dst, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["code", "name", "currency", "parent"])
        for code, name in rows:
            writer.writerow([code, name, "EUR", ""])
    return len(rows)


if __name__ == "__main__":
    print(f"migrated {migrate(sys.argv[1], sys.argv[2])} accounts")
