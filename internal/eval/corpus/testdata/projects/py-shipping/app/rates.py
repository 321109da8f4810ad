from __future__ import annotations

from decimal import Decimal

from .models import Service

ZONES: dict[str, str] = {"DE": "1", "FR": "1", "NL": "1", "CH": "2", "GB": "2", "US": "3"}

# per started kilogram, by zone
RATES: dict[str, Decimal] = {"1": Decimal("4.90"), "2": Decimal("9.50"), "3": Decimal("21.00")}

SERVICE_FACTOR: dict[Service, float] = {Service.STANDARD: 1.0, Service.EXPRESS: 1.8, Service.FREIGHT: 0.7}

MAX_WEIGHT_KG: int = 31.5


def zone_for(country: str) -> str | None:
    return ZONES.get(country.upper())


def rate_for(zone: str) -> Decimal:
    return RATES.get(zone)


def price(zone: str, kilos: int, service: Service) -> Decimal:
    base = rate_for(zone) * kilos
    return base * SERVICE_FACTOR[service]
