import pytest

from inventory.stock import OutOfStock


def test_ship_reserved(stock):
    stock.reserve("TOOL-0001", 4)
    stock.ship("TOOL-0001", 4)
    assert stock.on_hand["TOOL-0001"] == 36
    assert stock.count("TOOL-0001") == 36


def test_ship_unreserved_fails(stock):
    with pytest.raises(OutOfStock):
        stock.ship("TOOL-0002", 300)


def test_ship_unknown_sku(stock):
    with pytest.raises(OutOfStock):
        stock.ship("NOPE-0001", 1)
