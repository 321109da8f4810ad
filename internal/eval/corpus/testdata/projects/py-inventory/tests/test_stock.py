import pytest

from inventory.stock import OutOfStock, Stock


def test_restock_adds(stock):
    stock.restock("TOOL-0001", 10)
    assert stock.available("TOOL-0001") == 50


def test_restock_rejects_zero(stock):
    with pytest.raises(ValueError, match="must be positive"):
        stock.restock("TOOL-0001", 0)


def test_reserve_reduces_available(stock):
    stock.reserve("TOOL-0002", 100)
    assert stock.available("TOOL-0002") == 150


def test_reserve_error_when_insufficient(stock):
    with pytest.raises(OutOfStock) as err:
        stock.reserve("GLOV-0010-L", 13)
    assert err.value.available == 12


def test_release_never_negative(stock):
    stock.reserve("TOOL-0001", 5)
    stock.release("TOOL-0001", 50)
    assert stock.reserved["TOOL-0001"] == 0


def test_count_is_alias_of_available(stock):
    assert stock.count("TOOL-0002") == stock.available("TOOL-0002")


def test_unknown_sku_has_nothing_available():
    assert Stock().available("NOPE-0001") == 0
