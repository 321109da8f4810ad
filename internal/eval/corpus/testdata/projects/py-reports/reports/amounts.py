"""Parses money amounts as they appear in exported spreadsheets.

Accepts "1234.56", "1,234.56" (en), "1.234,56" (de), "1 234,56" (fr),
a leading currency sign or trailing code, and accounting negatives "(12.00)".
"""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

SIGNS = {"€": "EUR", "$": "USD", "£": "GBP"}
_CODE = re.compile(r"\s*([A-Z]{3})$")


class AmountError(ValueError):
    pass


def parse_amount(text: str, locale: str = "en") -> tuple[Decimal, str | None]:
    s = text.strip()
    if not s:
        raise AmountError("empty amount")
    currency = None
    if s[0] in SIGNS:
        currency, s = SIGNS[s[0]], s[1:].strip()
    m = _CODE.search(s)
    if m:
        currency, s = m.group(1), s[: m.start()].strip()
    negative = False
    if s.startswith("(") and s.endswith(")"):
        negative, s = True, s[1:-1]
    elif s.startswith("-"):
        negative, s = True, s[1:]
    if locale == "en":
        s = s.replace(",", "")
    elif locale == "de":
        s = s.replace(".", "").replace(",", ".")
    elif locale == "fr":
        s = s.replace("\u202f", "").replace(" ", "").replace(",", ".")
    else:
        raise AmountError(f"unknown locale {locale!r}")
    try:
        value = Decimal(s)
    except InvalidOperation:
        raise AmountError(f"not an amount: {text!r}") from None
    return (-value if negative else value), currency
