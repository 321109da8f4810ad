"""Stock levels and reservations."""


class OutOfStock(Exception):
    pass


class Stock:
    def __init__(self, levels=None):
        self.levels = dict(levels or {})
        self.reserved = {}

    def available(self, sku):
        return self.levels.get(sku, 0) - self.reserved.get(sku, 0)

    def reserve(self, sku, qty):
        if qty > self.available(sku):
            raise OutOfStock(f"{sku}: {qty} requested, {self.available(sku)} available")
        self.reserved[sku] = self.reserved.get(sku, 0) + qty

    def release(self, sku, qty):
        self.reserved[sku] = max(0, self.reserved.get(sku, 0) - qty)
