from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum


class Service(Enum):
    STANDARD = "standard"
    EXPRESS = "express"
    FREIGHT = "freight"


@dataclass(frozen=True)
class Address:
    name: str
    street: str
    city: str
    country: str
    postcode: str | None = None


@dataclass
class Parcel:
    weight_grams: int
    length_cm: int
    width_cm: int
    height_cm: int
    dest: Address
    service: Service = Service.STANDARD
    tags: list[str] = field(default_factory=list)

    @property
    def volumetric_grams(self) -> int:
        return self.length_cm * self.width_cm * self.height_cm * 1000 // 5000


@dataclass
class Quote:
    parcel: Parcel
    zone: str
    net: Decimal
    surcharge: Decimal = Decimal("0")

    @property
    def total(self) -> Decimal:
        return self.net + self.surcharge
