"""A small double-entry ledger: accounts, transactions, balances and reports."""

__version__ = "0.4.1"
