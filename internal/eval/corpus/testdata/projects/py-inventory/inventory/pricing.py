"""Unit prices with quantity tiers, in cents."""
from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

# (minimum quantity, discount percent), highest first
TIERS = [(500, 15), (100, 10), (20, 5)]
VAT_RATE = Decimal("0.20")


def discount_for(qty: int) -> int:
    for minimum, pct in TIERS:
        if qty > minimum:
            return pct
    return 0


def line_price(unit_cents: int, qty: int) -> int:
    gross = Decimal(unit_cents * qty)
    net = gross * (100 - discount_for(qty)) / 100
    return int(net.quantize(Decimal("1"), rounding=ROUND_HALF_UP))


def quote(lines: list[tuple[str, int, int]]) -> dict:
    """lines: (sku, unit_cents, qty) -> a quote with subtotal, VAT and total in cents."""
    items = [{"sku": sku, "qty": qty, "cents": line_price(unit, qty)} for sku, unit, qty in lines]
    subtotal = sum(i["cents"] for i in items)
    vat = int(Decimal(subtotal) * VAT_RATE)
    return {"items": items, "subtotal": subtotal, "vat": vat, "total": subtotal + vat}
