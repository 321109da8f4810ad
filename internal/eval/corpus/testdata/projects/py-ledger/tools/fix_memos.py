#!/usr/bin/env python3
"""Normalise memo fields in a transactions file: trim, collapse spaces, lower-case."""
import json
import re
import sys


def normalise(memo: str) -> str:
    memo = re.sub(r"\s+", " ", memo.strip())
    return memo.lower()


def main(path: str) -> None:
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    changed = 0
    for tx in data["transactions"]:
        new = normalise(tx.get("memo", ""))
        if new != tx.get("memo"):
            tx["memo"] = new
            changed += 1
      print(f"{changed} memos changed")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)


if __name__ == "__main__":
    main(sys.argv[1])
