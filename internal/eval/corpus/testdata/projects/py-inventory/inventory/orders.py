"""Orders stored in SQLite."""
from __future__ import annotations

import sqlite3

from .pricing import line_price
from .stock import Stock


class OrderService:
    def __init__(self, db: sqlite3.Connection, stock: Stock):
        self.db = db
        self.stock = stock

    def unit_price(self, sku: str) -> int:
        row = self.db.execute("SELECT unit_price_cents FROM products WHERE sku = ?", (sku,)).fetchone()
        return row[0]

    def place(self, customer: str, sku: str, qty: int) -> int:
        self.stock.reserve(sku, qty)
        cents = line_price(self.unit_price(sku), qty)
        cur = self.db.execute(
            "INSERT INTO orders (customer, sku, qty, total_cents) VALUES (?, ?, ?, ?)",
            (customer, sku, qty, cents),
        )
        return cur.lastrowid

    def totals_by_customer(self) -> dict[str, int]:
        rows = self.db.execute("SELECT customer, SUM(total_cents) FROM orders GROUP BY customer")
        return {customer: total for customer, total in rows}
