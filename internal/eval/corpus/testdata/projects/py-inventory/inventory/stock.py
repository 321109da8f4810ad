"""In-memory stock levels with reservations."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field


class OutOfStock(Exception):
    def __init__(self, sku: str, wanted: int, available: int):
        super().__init__(f"{sku}: wanted {wanted}, only {available} available")
        self.sku, self.wanted, self.available = sku, wanted, available


@dataclass
class Stock:
    on_hand: dict[str, int] = field(default_factory=dict)
    reserved: dict[str, int] = field(default_factory=dict)

    def restock(self, sku: str, qty: int) -> None:
        if qty <= 0:
            raise ValueError(f"restock quantity must be positive, got {qty}")
        self.on_hand[sku] = self.on_hand.get(sku, 0) + qty

    def available(self, sku: str) -> int:
        return self.on_hand.get(sku, 0) - self.reserved.get(sku, 0)

    def count(self, sku: str) -> int:
        warnings.warn("Stock.count() is deprecated, use Stock.available()", DeprecationWarning, stacklevel=2)
        return self.available(sku)

    def reserve(self, sku: str, qty: int) -> None:
        avail = self.available(sku)
        if qty > avail:
            raise OutOfStock(sku, qty, avail)
        self.reserved[sku] = self.reserved.get(sku, 0) + qty

    def release(self, sku: str, qty: int) -> None:
        held = self.reserved.get(sku, 0)
        self.reserved[sku] = max(0, held - qty)

    def ship(self, sku: str, qty: int) -> None:
        self.release(sku, qty)
        self.on_hand[sku] -= qty
