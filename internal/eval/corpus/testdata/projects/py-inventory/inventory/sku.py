"""SKU codes look like CAT-0042-XL: category, item number, optional size."""
from __future__ import annotations

import re
from typing import NamedTuple

_SKU = re.compile(r"^(?P<cat>[A-Z]{2,4})-(?P<num>\d{4})(?:-(?P<size>XS|S|M|L|XL|XXL))?$")


class InvalidSku(ValueError):
    pass


class Sku(NamedTuple):
    category: str
    number: int
    size: str | None

    def __str__(self) -> str:
        base = f"{self.category}-{self.number:04d}"
        return f"{base}-{self.size}" if self.size else base


def parse_sku(text: str) -> Sku:
    if not text or not text.strip():
        raise InvalidSku("empty SKU")
    m = _SKU.match(text.strip().upper())
    if m is None:
        raise InvalidSku(f"malformed SKU: {text!r}")
    return Sku(m["cat"], int(m["num"]), m["size"])
