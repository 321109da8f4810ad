from inventory.stock import OutOfStock

import pytest


def test_place_order_records_total(service, db):
    order_id = service.place("acme", "TOOL-0001", 2)
    row = db.execute("SELECT total_cents FROM orders WHERE id = ?", (order_id,)).fetchone()
    assert row == (3798,)


def test_place_order_reserves_stock(service, stock):
    service.place("acme", "GLOV-0010-L", 10)
    assert stock.available("GLOV-0010-L") == 2


def test_place_order_out_of_stock(service):
    with pytest.raises(OutOfStock):
        service.place("acme", "GLOV-0010-L", 13)


def test_totals_by_customer(service):
    service.place("acme", "TOOL-0001", 1)
    service.place("globex", "TOOL-0002", 20)
    service.place("acme", "TOOL-0002", 1)
    assert service.totals_by_customer() == {"acme": 1899 + 749, "globex": 14231}
