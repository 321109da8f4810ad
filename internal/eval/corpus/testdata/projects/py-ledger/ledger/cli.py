"""Command line entry point: python3 -m ledger.cli COMMAND ..."""
from __future__ import annotations

import argparse
import logging
import sys
from datetime import date

from . import __version__, fx, loader, report

log = logging.getLogger("ledger")


def cmd_balance(args: argparse.Namespace) -> int:
    accounts = loader.load_accounts(args.accounts)
    txs = loader.load_transactions(args.transactions)
    report.post_all(accounts, txs)
    print("\n".join(report.format_balances(accounts)))
    print(f"\n{len(txs)} transactions, volume {report.total_volume(txs):.2f}")
    return 0


def cmd_average(args: argparse.Namespace) -> int:
    txs = loader.load_transactions(args.transactions)
    avg = report.daily_average(txs, date.fromisoformat(args.start), date.fromisoformat(args.end))
    print(f"average per day {args.start}..{args.end}: {avg:.2f}")
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    txs = loader.load_transactions(args.transactions)
    rates = fx.load_rates(args.rates)
    for tx_id, value in fx.convert_all(txs, args.to, rates):
        print(f"{tx_id:>6} {value:>12} {args.to}")
    return 0


def cmd_tree(args: argparse.Namespace) -> int:
    accounts = loader.load_accounts(args.accounts)
    print("\n".join(report.render_tree(accounts)))
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    if not args.skip_bad:
        txs = loader.load_bank_export(args.export)
        for tx in txs:
            log.debug("imported tx %d %s %s -> %s %s", tx.id, tx.day, tx.debit, tx.credit, tx.amount)
        print(f"imported {len(txs)} transactions")
        return 0
    imported, rejected = 0, 0
    with open(args.export, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.rstrip("\n").split(";")
            try:
                cents = loader.parse_cents(fields[4])
            except (ValueError, IndexError):
                log.exception("line %d rejected: %r", lineno, line.rstrip("\n"))
                rejected += 1
                continue
            log.info("line %d: tx %s %s cents", lineno, fields[0], cents)
            imported += 1
    print(f"imported {imported} transactions, {rejected} rejected")
    return 0


def cmd_rates(args: argparse.Namespace) -> int:
    start, end = (date.fromisoformat(d) for d in args.days.split(".."))
    table = fx.rates_between(start, end, args.dir)
    for day in sorted(table):
        print(day, " ".join(f"{c}={v}" for c, v in sorted(table[day].items())))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    txs = loader.load_transactions(args.transactions)
    rows = [(t.id, t.day, t.debit, t.credit, t.amount, t.memo) for t in txs]
    if args.format == "table":
        from tabulate import tabulate

        print(tabulate(rows, headers=["id", "day", "debit", "credit", "amount", "memo"]))
    else:
        for row in rows:
            print(";".join(str(v) for v in row))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="ledger", description=f"ledger {__version__}")
    p.add_argument("-v", "--verbose", action="store_true")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("balance")
    s.add_argument("--accounts", default="data/accounts.csv")
    s.add_argument("transactions")
    s.set_defaults(func=cmd_balance)

    s = sub.add_parser("average")
    s.add_argument("--from", dest="start", required=True)
    s.add_argument("--to", dest="end", required=True)
    s.add_argument("transactions")
    s.set_defaults(func=cmd_average)

    s = sub.add_parser("convert")
    s.add_argument("--to", required=True)
    s.add_argument("--rates", default="data/rates.json")
    s.add_argument("transactions")
    s.set_defaults(func=cmd_convert)

    s = sub.add_parser("tree")
    s.add_argument("accounts")
    s.set_defaults(func=cmd_tree)

    s = sub.add_parser("import")
    s.add_argument("--skip-bad", action="store_true")
    s.add_argument("export")
    s.set_defaults(func=cmd_import)

    s = sub.add_parser("rates")
    s.add_argument("--dir", default="data/rates")
    s.add_argument("days")
    s.set_defaults(func=cmd_rates)

    s = sub.add_parser("export")
    s.add_argument("--format", choices=["csv", "table"], default="csv")
    s.add_argument("transactions")
    s.set_defaults(func=cmd_export)

    args = p.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
