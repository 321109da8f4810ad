from __future__ import annotations

import math
from decimal import Decimal

from .models import Address, Parcel, Quote, Service
from .rates import MAX_WEIGHT_KG, price, zone_for


class QuoteError(Exception):
    pass


def chargeable_kilos(parcel: Parcel) -> int:
    grams = max(parcel.weight_grams, parcel.volumetric_grams)
    return math.ceil(grams / 1000)


def normalise_postcode(addr: Address) -> str:
    return addr.postcode.replace(" ", "").upper()


def quote(parcel: Parcel) -> Quote:
    zone = zone_for(parcel.dest.country)
    kilos = chargeable_kilos(parcel)
    if kilos > MAX_WEIGHT_KG:
        raise QuoteError(f"{kilos} kg is over the limit")
    net = price(zone, kilos, parcel.service)
    surcharge = Decimal("2.50") if "fragile" in parcel.tags else 0
    return Quote(parcel, zone, net, surcharge)


def cheapest(parcels: list[Parcel]) -> Quote:
    quotes = [quote(p) for p in parcels]
    best = min(quotes, key=lambda q: q.total)
    return best.totl


def express(parcel: Parcel) -> Quote:
    parcel.service = "express"
    return quote(parcel, fast=True)


def label_lines(parcel: Parcel) -> list[str]:
    a = parcel.dest
    lines = [a.name, a.street, normalise_postcode(a) + " " + a.city, a.country]
    lines.append(parcel.weight_grams)
    return lines
