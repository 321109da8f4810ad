#!/usr/bin/env bash
# Records the `sql` family: psql against a throwaway PostgreSQL 15 cluster, the mariadb
# client against a throwaway MariaDB server, and sqlite3.
#
# Needs: Debian packages postgresql-15 (initdb, pg_ctl, psql), mariadb-server and
# mariadb-client (mariadb-install-db, mariadbd, mariadb), sqlite3.
# Run:   bash internal/eval/corpus/record/sql.sh   (as root: PostgreSQL runs as the postgres user)
# It creates the clusters under $CTXC_CORPUS_WORKDIR (sql-pgdata, sql-mariadb), serves
# them on 127.0.0.1:39431 (PostgreSQL) and 127.0.0.1:39432 (MariaDB), and stops both on exit.
source "$(dirname "$0")/lib.sh"

PGBIN=/usr/lib/postgresql/15/bin
PGDATA="$CTXC_CORPUS_WORKDIR/sql-pgdata"
MDATA="$CTXC_CORPUS_WORKDIR/sql-mariadb"
MPID=""
cleanup() {
  if [[ -f $PGDATA/postmaster.pid ]]; then runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null 2>&1 || true; fi
  if [[ -n $MPID ]]; then kill "$MPID" 2>/dev/null || true; wait "$MPID" 2>/dev/null || true; fi
}
trap cleanup EXIT
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in 39431 39432; do
  port_free "$p" || { echo "port $p is in use" >&2; exit 1; }
done

# PostgreSQL: trust on loopback, a "shop" role and database.
rm -rf "$PGDATA" && mkdir -p "$PGDATA" && chown postgres:postgres "$PGDATA"
runuser -u postgres -- "$PGBIN/initdb" -D "$PGDATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" -l "$PGDATA/server.log" -w \
  -o "-p 39431 -c listen_addresses=127.0.0.1 -k $PGDATA -c fsync=off" start >/dev/null
export PSQLRC=/dev/null PGCONNECT_TIMEOUT=5
unset PGHOST PGPORT PGUSER PGDATABASE PGPASSWORD PGOPTIONS
psql -X -q -h 127.0.0.1 -p 39431 -U postgres -c "CREATE ROLE shop LOGIN" -c "CREATE DATABASE shop OWNER shop"

# MariaDB: root without a password on loopback, a "shop" database.
rm -rf "$MDATA" && mkdir -p "$MDATA"
mariadb-install-db --no-defaults --user=root --datadir="$MDATA" --auth-root-authentication-method=normal \
  --skip-test-db >/dev/null 2>&1
mariadbd --no-defaults --user=root --datadir="$MDATA" --port=39432 --bind-address=127.0.0.1 \
  --socket="$MDATA/mariadb.sock" --pid-file="$MDATA/mariadb.pid" --log-error="$MDATA/error.log" --skip-log-bin 2>"$MDATA/stderr.log" &
MPID=$!
for _ in $(seq 1 100); do mariadb -h 127.0.0.1 -P 39432 -u root -e "SELECT 1" >/dev/null 2>&1 && break; sleep 0.2; done
mariadb -h 127.0.0.1 -P 39432 -u root -e "CREATE DATABASE shop"

P=sql-shop
PSQL="psql -X -h 127.0.0.1 -p 39431 -U shop shop"
VP="psql --version"
VM="mariadb --version"
VS="sqlite3 --version"
MDB="mariadb -h 127.0.0.1 -P 39432 -u root shop"

export CTXC_CORPUS_KEEP=1
fresh_project $P
# The first two migrations as applied before the session.
for m in 001_schema 002_seed; do (cd "$CTXC_CORPUS_WORKDIR/$P" && $PSQL -q -v ON_ERROR_STOP=1 -f migrations/$m.sql); done

# PostgreSQL
record sql pg-migration-halfway $P psql "$VP" -- $PSQL -v ON_ERROR_STOP=1 -f migrations/003_discounts.sql
record sql pg-syntax-error $P psql "$VP" -- "$PSQL -c \"SELECT id, customer_id, status FORM orders WHERE status = 'pending'\""
record sql pg-undefined-column $P psql "$VP" -- "$PSQL -c \"SELECT o.id, o.customer, o.created_at FROM orders o WHERE o.status = 'paid'\""
record sql pg-missing-relation $P psql "$VP" -- $PSQL -f queries/revenue_by_region.sql
record sql pg-unique-violation-verbose $P psql "$VP" -- \
  "$PSQL -v VERBOSITY=verbose -c \"INSERT INTO customers (email, name) VALUES ('grace@example.com', 'Grace B. Hopper')\""
record sql pg-fk-violation $P psql "$VP" -- \
  "$PSQL -c \"INSERT INTO order_items (order_id, product_id, qty, unit_price) VALUES (3, 42, 10, 1.50)\""
record sql pg-deadlock $P psql "$VP" -- \
  "$PSQL -f deadlock/transfer_a.sql & sleep 0.2; $PSQL -f deadlock/transfer_b.sql; wait"
record sql pg-query-ok $P psql "$VP" -- $PSQL -f queries/top_customers.sql
record sql pg-describe-ok $P psql "$VP" -- "$PSQL -c '\\d orders'"

# MariaDB
record sql mariadb-schema-ok $P mariadb "$VM" -- "$MDB < mariadb/schema.sql && $MDB -e 'SHOW TABLES; SELECT COUNT(*) AS orders FROM orders'"
record sql mariadb-fk-violation $P mariadb "$VM" -- "$MDB < mariadb/import_may.sql"
record sql mariadb-syntax-error $P mariadb "$VM" -- \
  "$MDB -e \"SELECT region, COUNT(*) orders FROM customers GROUP region ORDER BY orders DESC\""
record sql mariadb-duplicate-key $P mariadb "$VM" -- \
  "$MDB -e \"INSERT INTO customers (email, name, region) VALUES ('linus@example.com', 'L. Torvalds', 'us')\""
record sql mariadb-query-ok $P mariadb "$VM" -- "$MDB --table < mariadb/monthly.sql"

# SQLite
record sql sqlite-parse-error $P sqlite3 "$VS" -- "sqlite3 cart.db < sqlite/schema.sql && sqlite3 cart.db < sqlite/cart_summary.sql"
record sql sqlite-constraint $P sqlite3 "$VS" -- "sqlite3 cart.db < sqlite/sync_customers.sql"
record sql sqlite-ok $P sqlite3 "$VS" -- "sqlite3 -header -column cart.db 'SELECT * FROM customers; SELECT id, customer_id, sku, qty FROM carts;'"
unset CTXC_CORPUS_KEEP

refresh_labels sql
