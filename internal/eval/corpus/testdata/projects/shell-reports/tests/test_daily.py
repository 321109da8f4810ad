import unittest
from decimal import Decimal

from reports.daily import SALES, summarize


class SummarizeTest(unittest.TestCase):
    def test_units_per_sku(self):
        rows = summarize(SALES, "2024-05-07")
        self.assertEqual(rows, [{"sku": "DRILL-6", "units": 3, "revenue": Decimal("11.70"), "avg_price": Decimal("3.900")}])

    def test_average_price_is_weighted(self):
        rows = {r["sku"]: r for r in summarize(SALES, "2024-05-06")}
        self.assertEqual(rows["BOLT-M6"]["avg_price"], Decimal("0.118"))

    def test_unknown_date_is_empty(self):
        self.assertEqual(summarize(SALES, "2024-01-01"), [])

    def test_revenue_total(self):
        rows = summarize(SALES, "2024-05-06")
        self.assertEqual(sum(r["revenue"] for r in rows), Decimal("41.50"))


if __name__ == "__main__":
    unittest.main()
