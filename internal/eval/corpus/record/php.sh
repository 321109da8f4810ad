#!/usr/bin/env bash
# Re-records the php family: php-cli fatal errors (undefined function,
# TypeError, uncaught exception chains, DivisionByZeroError), warnings mixed
# with output, parse errors (php -l and at require time), PHPUnit failing and
# passing, and composer failing without Packagist.
#
# Needs: Debian's php-cli 8.2 (its default ini: display_errors Off, log_errors
# On, so errors arrive on stderr prefixed "PHP "), phpunit 9.6 and composer
# (apt-get install php-cli phpunit composer), jq. Packagist must be
# unreachable for the composer case (it records composer's real error).
#
# Run: bash internal/eval/corpus/record/php.sh   (from anywhere; ~10 seconds)
source "$(dirname "$0")/lib.sh"

PHP="php --version | head -n 1"
PHPUNIT="phpunit --version | head -n 1"

record php checkout-ok php-cart php "$PHP" -- php bin/checkout.php carts/basic.json
record php undefined-function php-cart php "$PHP" -- php bin/checkout.php carts/basic.json --format=csv
record php typeerror-strict-types php-cart php "$PHP" -- php bin/checkout.php carts/from-form.json
record php uncaught-exception-next php-cart php "$PHP" -- php bin/checkout.php carts/broken.json
record php division-by-zero-after-output php-cart php "$PHP" -- php bin/checkout.php carts/empty.json
record php warnings-mixed-with-output php-cart php "$PHP" -- php bin/import_legacy.php carts/legacy_orders.csv
record php parse-error-on-require php-cart php "$PHP" -- php bin/export.php carts/basic.json INV-2024-0042
record php lint-parse-error php-cart php "$PHP" -- php -l src/Legacy/InvoiceExport.php
record php lint-all-ok php-cart php "$PHP" -- 'for f in src/*.php bin/*.php tests/*.php; do php -l "$f"; done'
record php phpunit-failures php-cart phpunit "$PHPUNIT" -- phpunit
record php phpunit-testdox-pass php-cart phpunit "$PHPUNIT" -- phpunit --testdox tests/ProductTest.php
record php composer-require-offline php-cart composer "composer --version 2>/dev/null | head -n 1" -- \
  composer require guzzlehttp/guzzle:^7.8
record php cat-source php-cart cat "cat --version | head -n 1" -- cat -n src/Cart.php
