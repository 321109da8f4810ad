from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal


class LedgerError(Exception):
    """Raised when the ledger cannot be loaded or does not balance."""


@dataclass
class Account:
    code: str
    name: str
    currency: str = "EUR"
    parent: str | None = None
    balance: Decimal = Decimal("0")
    children: list[Account] = field(default_factory=list)

    def post(self, amount: Decimal) -> None:
        self.balance += amount


@dataclass
class Transaction:
    id: int
    day: date
    debit: str
    credit: str
    amount: Decimal
    currency: str = "EUR"
    memo: str = ""
