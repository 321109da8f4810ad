import pytest

from inventory.pricing import discount_for, line_price, quote


@pytest.mark.parametrize(
    "qty,pct",
    [(1, 0), (19, 0), (20, 5), (99, 5), (100, 10), (499, 10), (500, 15), (1000, 15)],
)
def test_discount_for(qty, pct):
    assert discount_for(qty) == pct


@pytest.mark.parametrize(
    "unit,qty,expected",
    [
        pytest.param(1999, 3, 5997, id="plain"),
        pytest.param(749, 21, 14943, id="tier1-21"),
        pytest.param(749, 100, 67410, id="bulk-100"),
        pytest.param(333, 7, 2331, id="odd-cents"),
    ],
)
def test_line_price(unit, qty, expected):
    assert line_price(unit, qty) == expected


def test_quote_totals():
    q = quote([("TOOL-0001", 1899, 2), ("TOOL-0002", 749, 20)])
    assert q == {
        "items": [
            {"sku": "TOOL-0001", "qty": 2, "cents": 3798},
            {"sku": "TOOL-0002", "qty": 20, "cents": 14231},
        ],
        "subtotal": 18029,
        "vat": 3605,
        "total": 21634,
    }


def test_vat_is_truncated_not_rounded():
    q = quote([("GLOV-0010-L", 499, 1)])
    assert q["vat"] == 99
