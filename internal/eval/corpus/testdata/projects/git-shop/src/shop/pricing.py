"""Order pricing: unit prices, discounts and totals."""
from decimal import Decimal, ROUND_HALF_UP

CENT = Decimal("0.01")

# Discount codes and their percentages.
DISCOUNTS = {
    "SPRING10": Decimal("10"),
    "STAFF20": Decimal("20"),
}


def line_total(unit_price, qty):
    """Price of one order line, before discounts."""
    if qty <= 0:
        raise ValueError(f"quantity must be positive, got {qty}")
    return (Decimal(str(unit_price)) * qty).quantize(CENT, rounding=ROUND_HALF_UP)


def apply_discount(amount, code=None):
    """Amount after the discount code, if any; unknown codes are an error."""
    if code is None:
        return amount
    try:
        percent = DISCOUNTS[code]
    except KeyError:
        raise ValueError(f"unknown discount code {code!r}") from None
    return (amount * (100 - percent) / 100).quantize(CENT, rounding=ROUND_HALF_UP)


def order_total(lines, code=None):
    """Total of an order: the sum of its lines, then the discount."""
    subtotal = sum((line_total(l["unit_price"], l["qty"]) for l in lines), Decimal("0"))
    return apply_discount(subtotal, code)
