#!/usr/bin/env bash
# Builds this project's git history (fixed authors and dates, so the hashes are
# the same on every run) and leaves the repository in the state SCENARIO needs:
#   bash make_history.sh [base|worktree|rebase|push|hook|apply]
# push also creates the bare remote ORIGIN (default ../git-shop-origin.git).
set -euo pipefail
scenario=${1:-base}
origin=${ORIGIN:-$(cd .. && pwd)/git-shop-origin.git}

export GIT_AUTHOR_NAME="Ada Lovelace" GIT_AUTHOR_EMAIL="ada@shop.example"
export GIT_COMMITTER_NAME="Ada Lovelace" GIT_COMMITTER_EMAIL="ada@shop.example"
day=0
commit() {
  day=$((day + 1))
  export GIT_AUTHOR_DATE="2024-05-$(printf %02d $day)T10:00:00Z" GIT_COMMITTER_DATE="2024-05-$(printf %02d $day)T10:00:00Z"
  git commit -q -m "$1"
}
edit() { python3 - "$@"; }

rm -rf .git
git init -q -b main
printf '%s\n' make_history.sh hooks/ patches/ __pycache__/ '*.pyc' >.git/info/exclude

# v0.1.0: pricing and stock as they are in the files.
cp src/shop/pricing.py /tmp/pricing.orig.$$
git add README.md src tests
commit "Initial pricing and stock modules"
git tag v0.1.0

edit <<'PY'
p = "src/shop/pricing.py"; s = open(p).read()
s = s.replace('    "STAFF20": Decimal("20"),\n', '    "STAFF20": Decimal("20"),\n    "BULK15": Decimal("15"),\n')
open(p, "w").write(s)
PY
git add -A src
commit "pricing: add the BULK15 code for orders of 1000+ units"
git tag v0.2.0

# feature/bulk-pricing: tiers instead of a code, from v0.2.0.
git checkout -q -b feature/bulk-pricing
edit <<'PY'
p = "src/shop/pricing.py"; s = open(p).read()
s = s.replace('''    return (amount * (100 - percent) / 100).quantize(CENT, rounding=ROUND_HALF_UP)''',
'''    discounted = amount - amount * percent / 100
    return discounted.quantize(CENT, rounding=ROUND_HALF_UP)


# Bulk tiers: (minimum units, percent off), highest first.
BULK_TIERS = [(5000, Decimal("20")), (1000, Decimal("15")), (500, Decimal("5"))]


def bulk_percent(units):
    """Percent off for an order of this many units."""
    for minimum, percent in BULK_TIERS:
        if units >= minimum:
            return percent
    return Decimal("0")''')
open(p, "w").write(s)
PY
git add -A src
commit "pricing: tiered bulk discounts"
edit <<'PY'
p = "tests/test_pricing.py"; s = open(p).read()
s = s.replace("from shop.pricing import apply_discount, line_total, order_total",
              "from shop.pricing import apply_discount, bulk_percent, line_total, order_total")
s = s.replace('''

if __name__''', '''
    def test_bulk_tiers(self):
        self.assertEqual(bulk_percent(499), Decimal("0"))
        self.assertEqual(bulk_percent(1000), Decimal("15"))
        self.assertEqual(bulk_percent(7500), Decimal("20"))


if __name__''')
open(p, "w").write(s)
PY
git add -A tests
commit "tests: bulk tiers"

# main goes on: banker's rounding for discounts, and docs.
git checkout -q main
edit <<'PY'
p = "src/shop/pricing.py"; s = open(p).read()
s = s.replace("from decimal import Decimal, ROUND_HALF_UP", "from decimal import Decimal, ROUND_HALF_EVEN, ROUND_HALF_UP")
s = s.replace('''    return (amount * (100 - percent) / 100).quantize(CENT, rounding=ROUND_HALF_UP)''',
'''    # Finance rounds discounts half to even (see FIN-212).
    return (amount * (100 - percent) / 100).quantize(CENT, rounding=ROUND_HALF_EVEN)''')
open(p, "w").write(s)
PY
git add -A src
commit "pricing: round discounted amounts half to even (FIN-212)"
edit <<'PY'
p = "README.md"; s = open(p).read()
s += "\nDiscount codes live in `src/shop/pricing.py` (`DISCOUNTS`); finance owns the rounding rules.\n"
open(p, "w").write(s)
PY
git add README.md
commit "docs: where discount codes live"
edit <<'PY'
p = "src/shop/stock.py"; s = open(p).read()
s = s.replace('''    def release(self, sku, qty):''', '''    def reserve_all(self, lines):
        """Reserve every (sku, qty) or none of them."""
        done = []
        try:
            for sku, qty in lines:
                self.reserve(sku, qty)
                done.append((sku, qty))
        except OutOfStock:
            for sku, qty in done:
                self.release(sku, qty)
            raise

    def release(self, sku, qty):''')
open(p, "w").write(s)
PY
git add -A src
commit "stock: reserve_all reserves every line or none"
rm -f /tmp/pricing.orig.$$

case $scenario in
base) ;;
worktree)
  # uncommitted work: a bug fix in progress and a new file
  edit <<'PY'
p = "src/shop/stock.py"; s = open(p).read()
s = s.replace('''        if qty > self.available(sku):''', '''        if qty <= 0:
            raise ValueError(f"{sku}: quantity must be positive, got {qty}")
        if qty > self.available(sku):''')
open(p, "w").write(s)
PY
  printf 'import unittest\n\nfrom shop.stock import OutOfStock, Stock\n' >tests/test_stock.py
  ;;
rebase)
  git checkout -q feature/bulk-pricing
  ;;
push)
  rm -rf "$origin"
  git init -q --bare -b main "$origin"
  git remote add origin "$origin"
  git push -q origin main
  # a teammate pushes first
  other=$(mktemp -d)
  git clone -q "$origin" "$other/shop"
  (cd "$other/shop" && edit <<'PY'
p = "src/shop/pricing.py"; s = open(p).read()
s = s.replace('    "STAFF20": Decimal("20"),\n', '    "STAFF20": Decimal("20"),\n    "SUMMER5": Decimal("5"),\n')
open(p, "w").write(s)
PY
  git add -A src && day=20 && commit "pricing: add SUMMER5" && git push -q origin main)
  rm -rf "$other"
  edit <<'PY'
p = "src/shop/stock.py"; s = open(p).read()
s = s.replace('''    def available(self, sku):''', '''    def reserved_units(self):
        return sum(self.reserved.values())

    def available(self, sku):''')
open(p, "w").write(s)
PY
  git add -A src
  commit "stock: reserved_units for the dashboard"
  git fetch -q origin
  ;;
hook)
  cp hooks/pre-commit .git/hooks/pre-commit
  chmod +x .git/hooks/pre-commit
  edit <<'PY'
p = "src/shop/stock.py"; s = open(p).read()
s = s.replace('''    def release(self, sku, qty):''', '''    def low_stock(self, threshold=10):   
        """SKUs whose available units are below threshold."""
        return sorted(sku for sku in self.levels if self.available(sku) < threshold

    def release(self, sku, qty):''')
open(p, "w").write(s)
PY
  git add src/shop/stock.py
  ;;
apply) ;;
*) echo "unknown scenario $scenario" >&2; exit 2 ;;
esac
