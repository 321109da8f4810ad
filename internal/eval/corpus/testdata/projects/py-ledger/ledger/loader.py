"""Reads accounts (CSV) and transactions (JSON) from disk."""
from __future__ import annotations

import csv
import json
import logging
from datetime import date
from decimal import Decimal
from pathlib import Path

from .models import Account, LedgerError, Transaction

log = logging.getLogger(__name__)


def load_accounts(path: str | Path) -> dict[str, Account]:
    accounts: dict[str, Account] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            acct = Account(
                code=row["code"],
                name=row["name"],
                currency=row.get("currency") or "EUR",
                parent=row.get("parent") or None,
            )
            accounts[acct.code] = acct
    log.debug("loaded %d accounts from %s", len(accounts), path)
    return accounts


def parse_cents(text: str) -> int:
    """Amounts in the bank export are whole cents, e.g. "1250"."""
    return int(text.strip())


def load_bank_export(path: str | Path) -> list[Transaction]:
    """Reads the bank's CSV export: id;date;debit;credit;cents;memo"""
    txs = []
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.reader(fh, delimiter=";"):
            if not row or row[0].startswith("#"):
                continue
            cents = parse_cents(row[4])
            log.debug("tx %s on %s: %s -> %s, %d cents", row[0], row[1], row[2], row[3], cents)
            txs.append(
                Transaction(
                    id=int(row[0]),
                    day=date.fromisoformat(row[1]),
                    debit=row[2],
                    credit=row[3],
                    amount=Decimal(cents) / 100,
                    memo=row[5] if len(row) > 5 else "",
                )
            )
    return txs


def _decode(raw: dict) -> Transaction:
    return Transaction(
        id=raw["id"],
        day=date.fromisoformat(raw["day"]),
        debit=raw["debit"],
        credit=raw["credit"],
        amount=raw["amount"],
        currency=raw.get("currency", "EUR"),
        memo=raw.get("memo", ""),
    )


def load_transactions(path: str | Path) -> list[Transaction]:
    text = Path(path).read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LedgerError(f"cannot read transactions from {path}") from exc
    return [_decode(raw) for raw in data["transactions"]]
