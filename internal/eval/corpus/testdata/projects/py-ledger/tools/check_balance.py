#!/usr/bin/env python3
"""Checks that every transaction in a file debits and credits known accounts."""
import csv
import json
import sys


def main(accounts_path: str, tx_path: str) -> int:
    with open(accounts_path, newline="", encoding="utf-8") as fh:
        codes = {row["code"] for row in csv.DictReader(fh)}
    with open(tx_path, encoding="utf-8") as fh:
        txs = json.load(fh)["transactions"]
    unknown = [(t["id"], code) for t in txs for code in (t["debit"], t["credit"]) if code not in codes]
    for tx_id, code in unknown:
        print(f"tx {tx_id}: unknown account {code}")
    print(f"{len(txs)} transactions checked, {len(unknown)} unknown account references")
    return 1 if unknown else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
