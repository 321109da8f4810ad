import unittest
from decimal import Decimal

from shop.pricing import apply_discount, line_total, order_total


class PricingTest(unittest.TestCase):
    def test_line_total_rounds_half_up(self):
        self.assertEqual(line_total("0.125", 1), Decimal("0.13"))

    def test_discount(self):
        self.assertEqual(apply_discount(Decimal("50.00"), "SPRING10"), Decimal("45.00"))

    def test_unknown_code(self):
        with self.assertRaises(ValueError):
            apply_discount(Decimal("1.00"), "NOPE")

    def test_order_total(self):
        lines = [{"unit_price": "0.12", "qty": 200}, {"unit_price": "0.08", "qty": 200}]
        self.assertEqual(order_total(lines, "STAFF20"), Decimal("32.00"))


if __name__ == "__main__":
    unittest.main()
