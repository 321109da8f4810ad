#!/usr/bin/env bash
# Re-records the python family: tracebacks from python3, pytest runs, mypy and
# pyright type errors, pip failing offline, py_compile, and the ordinary reads
# (cat -n / sed -n of stdlib and project files, grep) of an agent's session.
#
# Needs: python3 (3.11; the pyenv one first on PATH here, Debian's
# /usr/bin/python3 for pytest and the externally-managed pip case), Debian
# packages python3-pytest and mypy (apt-get install python3-pytest mypy),
# node and npm (pyright 1.1.414 is npm-installed into the work
# dir copy of py-shipping, never into the repo), jq. PyPI must be unreachable
# for the pip cases (they record pip's real retries and its final error).
#
# Run: bash internal/eval/corpus/record/python.sh   (from anywhere; ~1 minute)
source "$(dirname "$0")/lib.sh"

PY="python3 --version"
PYTEST="pytest --version"

# --- py-ledger: a command line ledger; each command hits a different real bug.
record python tb-typeerror-str-amount py-ledger python3 "$PY" -- \
  python3 -m ledger.cli balance data/transactions_2024q2.json
record python tb-attributeerror-none py-ledger python3 "$PY" -- \
  python3 -m ledger.cli balance data/transactions_may.json
record python tb-zerodivision py-ledger python3 "$PY" -- \
  python3 -m ledger.cli average --from 2024-07-01 --to 2024-07-31 data/transactions.json
record python tb-keyerror py-ledger python3 "$PY" -- \
  python3 -m ledger.cli convert --to JPY data/transactions.json
record python tb-during-handling py-ledger python3 "$PY" -- \
  python3 -m ledger.cli convert --to USD data/transactions.json
record python tb-direct-cause-json py-ledger python3 "$PY" -- \
  python3 -m ledger.cli balance data/transactions_broken.json
record python tb-recursion py-ledger python3 "$PY" -- \
  python3 -m ledger.cli tree data/accounts_cycle.csv
record python tb-threadpool-invalidoperation py-ledger python3 "$PY" -- \
  python3 -m ledger.cli rates 2024-03-01..2024-03-05
record python tb-modulenotfound py-ledger python3 "$PY" -- \
  python3 -m ledger.cli export --format table data/transactions.json
record python tb-valueerror-int-long-log py-ledger python3 "$PY" -- \
  python3 -m ledger.cli -v import data/bank_march.csv
record python import-skip-bad-logged-traceback py-ledger python3 "$PY" -- \
  python3 -m ledger.cli import --skip-bad data/bank_april.csv
record python syntaxerror-never-closed py-ledger python3 "$PY" -- \
  python3 tools/migrate_2023.py old/accounts_2023.csv data/accounts.csv
record python indentationerror py-ledger python3 "$PY" -- \
  python3 tools/fix_memos.py data/transactions.json
record python py-compile py-ledger python3 "$PY" -- \
  python3 -m py_compile ledger/*.py tools/*.py
record python ledger-balance-ok py-ledger python3 "$PY" -- \
  python3 -m ledger.cli balance data/transactions.json
record python cat-project-file py-ledger cat "cat --version | head -n 1" -- \
  cat -n ledger/fx.py
record python grep-raise-except py-ledger grep "grep --version | head -n 1" -- \
  'grep -rn "raise\|except" ledger/ tools/'

# --- pip without PyPI.
record python pip-install-offline py-ledger pip "python3 -m pip --version" -- \
  python3 -m pip install -r requirements.txt
record python pip-externally-managed - pip "/usr/bin/python3 -m pip --version" -- \
  /usr/bin/python3 -m pip install tabulate

# --- py-inventory: a pytest suite with several kinds of failure.
record python pytest-q-suite py-inventory pytest "$PYTEST" -- pytest -q
record python pytest-fixture-error py-inventory pytest "$PYTEST" -- pytest tests/test_orders.py
record python pytest-exitfirst-tb-short py-inventory pytest "$PYTEST" -- pytest -x --tb=short
record python pytest-vv-dict-diff py-inventory pytest "$PYTEST" -- \
  pytest -vv tests/test_pricing.py::test_quote_totals
record python pytest-w-error-deprecation py-inventory pytest "$PYTEST" -- \
  pytest -q -W error::DeprecationWarning tests/test_stock.py
record python pytest-verbose-pass-warnings py-inventory pytest "$PYTEST" -- \
  pytest -v tests/test_stock.py tests/test_sku.py

# --- py-reports: a long passing parametrized run, and a collection error.
record python pytest-verbose-pass-long py-reports pytest "$PYTEST" -- pytest -v tests/test_amounts.py
record python pytest-collection-error py-reports pytest "$PYTEST" -- pytest -q

# --- py-shipping: type checkers.
record python mypy-errors py-shipping mypy "mypy --version" -- mypy app
fresh_project py-shipping
(cd "$CTXC_CORPUS_WORKDIR/py-shipping" && npm install --no-audit --no-fund >/dev/null 2>&1)
CTXC_CORPUS_KEEP=1 record python pyright-errors py-shipping pyright \
  "cd $CTXC_CORPUS_WORKDIR/py-shipping && npx pyright --version" -- npx pyright

# --- reading stdlib files and help output (successes, some noisy).
record python cat-stdlib-json-decoder - cat "cat --version | head -n 1" -- cat -n /usr/lib/python3.11/json/decoder.py
record python sed-stdlib-logging-licence - sed "sed --version | head -n 1" -- sed -n 1,140p /usr/lib/python3.11/logging/__init__.py
record python pytest-help - pytest "$PYTEST" -- pytest --help
