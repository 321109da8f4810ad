"""Balances, averages and the account tree."""
from __future__ import annotations

from collections import defaultdict
from datetime import date
from decimal import Decimal

from .models import Account, Transaction


def post_all(accounts: dict[str, Account], txs: list[Transaction]) -> None:
    for tx in txs:
        accounts.get(tx.debit).post(Decimal(str(tx.amount)))
        accounts.get(tx.credit).post(-Decimal(str(tx.amount)))


def total_volume(txs: list[Transaction]) -> Decimal:
    total = 0
    for tx in txs:
        total += tx.amount
    return Decimal(str(total))


def daily_average(txs: list[Transaction], start: date, end: date) -> Decimal:
    per_day: dict[date, Decimal] = defaultdict(Decimal)
    for tx in txs:
        if start <= tx.day <= end:
            per_day[tx.day] += Decimal(str(tx.amount))
    return sum(per_day.values()) / len(per_day)


def depth(account: Account, accounts: dict[str, Account]) -> int:
    if account.parent is None:
        return 0
    return 1 + depth(accounts[account.parent], accounts)


def render_tree(accounts: dict[str, Account]) -> list[str]:
    lines = []
    for code in sorted(accounts):
        acct = accounts[code]
        lines.append("  " * depth(acct, accounts) + f"{acct.code} {acct.name}")
    return lines


def format_balances(accounts: dict[str, Account]) -> list[str]:
    rows = [f"{'code':<6} {'account':<28} {'balance':>12}"]
    for code in sorted(accounts):
        a = accounts[code]
        rows.append(f"{a.code:<6} {a.name:<28} {a.balance:>12.2f} {a.currency}")
    return rows
