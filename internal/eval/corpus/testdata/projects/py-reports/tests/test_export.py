from decimal import Decimal

from reports.export import rows_to_csv


def test_rows_to_csv_quotes_separators():
    out = rows_to_csv([("ACME, Inc.", Decimal("12.50"))])
    assert out == '"ACME, Inc.",12.50\r\n'
