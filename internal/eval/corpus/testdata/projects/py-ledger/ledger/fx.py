"""Currency conversion against the EUR reference rates."""
from __future__ import annotations

import json
import logging
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

from .models import Transaction

log = logging.getLogger(__name__)


def load_rates(path: str | Path) -> dict[str, Decimal]:
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    return {cur: Decimal(value) for cur, value in raw["rates"].items()}


def _to_eur(tx: Transaction, rates: dict[str, Decimal]) -> Decimal:
    amount = Decimal(str(tx.amount))
    if tx.currency == "EUR":
        return amount
    return amount / rates[tx.currency]


def convert_all(txs: list[Transaction], target: str, rates: dict[str, Decimal]) -> list[tuple[int, Decimal]]:
    target_rate = Decimal("1") if target == "EUR" else rates[target]
    out = []
    for tx in txs:
        try:
            eur = _to_eur(tx, rates)
        except KeyError:
            log.warning("no rate for " + tx.currency + " on " + tx.day + ", skipping")
            continue
        out.append((tx.id, (eur * target_rate).quantize(Decimal("0.01"))))
    return out


def _rates_for(day: date, directory: Path) -> tuple[date, dict[str, Decimal]]:
    return day, load_rates(directory / f"{day.isoformat()}.json")


def rates_between(start: date, end: date, directory: str | Path) -> dict[date, dict[str, Decimal]]:
    days = [start + timedelta(days=i) for i in range((end - start).days + 1)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = [pool.submit(_rates_for, day, Path(directory)) for day in days]
        return dict(f.result() for f in futures)
