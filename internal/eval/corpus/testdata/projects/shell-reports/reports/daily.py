"""Daily sales report: one CSV row per SKU with units, revenue and the average unit price."""
import argparse
import csv
import sys
from collections import defaultdict
from decimal import Decimal

SALES = [
    {"date": "2024-05-06", "sku": "BOLT-M6", "qty": 200, "unit_price": "0.12"},
    {"date": "2024-05-06", "sku": "NUT-M6", "qty": 150, "unit_price": "0.08"},
    {"date": "2024-05-06", "sku": "BOLT-M6", "qty": 50, "unit_price": "0.11"},
    {"date": "2024-05-06", "sku": "TAPE-50", "qty": 0, "unit_price": "2.45"},
    {"date": "2024-05-07", "sku": "DRILL-6", "qty": 3, "unit_price": "3.90"},
]


def summarize(sales, date):
    units = defaultdict(int)
    revenue = defaultdict(Decimal)
    for s in sales:
        if s["date"] != date:
            continue
        units[s["sku"]] += s["qty"]
        revenue[s["sku"]] += Decimal(s["unit_price"]) * s["qty"]
    rows = []
    for sku in sorted(units):
        avg = revenue[sku] / units[sku]
        rows.append({"sku": sku, "units": units[sku], "revenue": revenue[sku], "avg_price": avg.quantize(Decimal("0.001"))})
    return rows


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--date", required=True)
    args = p.parse_args(argv)
    w = csv.DictWriter(sys.stdout, fieldnames=["sku", "units", "revenue", "avg_price"])
    w.writeheader()
    w.writerows(summarize(SALES, args.date))


if __name__ == "__main__":
    main()
