"""python3 -m app.cli PARCELS.json: prints a quote per parcel (old script, not yet typed)."""
import json
import sys

from .models import Address, Parcel, Service
from .service import QuoteError, quote


def load(path):
    with open(path) as fh:
        data = json.load(fh)
    parcels = []
    for raw in data["parcels"]:
        dest = Address(**raw.pop("dest"))
        service = Service(raw.pop("service", "standard"))
        parcels.append(Parcel(dest=dest, service=service, **raw))
    return parcels


def fmt(q):
    return f"{q.parcel.dest.name:<24} zone {q.zone}  {q.total:>8.2f} EUR"


def main(argv=None):
    argv = argv or sys.argv[1:]
    status = 0
    for parcel in load(argv[0]):
        try:
            print(fmt(quote(parcel)))
        except QuoteError as exc:
            print(f"{parcel.dest.name}: {exc}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
