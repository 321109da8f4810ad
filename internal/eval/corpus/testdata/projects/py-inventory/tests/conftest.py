import sqlite3
from pathlib import Path

import pytest

from inventory.orders import OrderService
from inventory.stock import Stock

SCHEMA = Path(__file__).resolve().parent.parent / "inventory" / "schema.sql"

PRODUCTS = [
    ("TOOL-0001", "Claw hammer", 1899),
    ("TOOL-0002", "Tape measure 5 m", 749),
    ("GLOV-0010-L", "Work gloves L", 499),
]


@pytest.fixture
def stock():
    s = Stock()
    s.restock("TOOL-0001", 40)
    s.restock("TOOL-0002", 250)
    s.restock("GLOV-0010-L", 12)
    return s


@pytest.fixture
def db():
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA.read_text())
    conn.executemany("INSERT INTO products (sku, name, price_cents) VALUES (?, ?, ?)", PRODUCTS)
    yield conn
    conn.close()


@pytest.fixture
def service(db, stock):
    return OrderService(db, stock)
