#!/usr/bin/env bash
# Records the `http` family: curl against real servers on loopback.
#
# Needs: curl, python3 (standard library), nginx and openssl (Debian: curl nginx openssl).
# Run:   bash internal/eval/corpus/record/http.sh
# It starts the orders API (testdata/projects/http-orders/server.py) on 127.0.0.1:39401,
# nginx in front of it on 39402 (HTTP) and 39403 (HTTPS, self-signed), python3 -m
# http.server on 39404, all from the copy in $CTXC_CORPUS_WORKDIR/http-orders that the
# commands run in (one copy for every case), and stops them on exit. Ports 39409 (nginx's
# "billing" upstream) and 39499 stay closed. The cases run in order: the server log case
# reads what the earlier requests left in logs/api.log.
source "$(dirname "$0")/lib.sh"


SRV="$CTXC_CORPUS_WORKDIR/http-orders"
export CTXC_CORPUS_KEEP=1
PIDS=()
cleanup() {
  if [[ -f $SRV/run/nginx.pid ]]; then nginx -p "$SRV/" -c "$SRV/nginx.conf" -s stop 2>/dev/null || true; fi
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_port() {
  for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done
  echo "port $1 did not open" >&2; return 1
}
for p in 39401 39402 39403 39404 39409 39499; do
  port_free "$p" || { echo "port $p is in use" >&2; exit 1; }
done

fresh_project http-orders
mkdir -p "$SRV"/{run,logs,tmp,tls}
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=shop.local -days 30 \
  -keyout "$SRV/tls/server.key" -out "$SRV/tls/server.crt" 2>/dev/null
(cd "$SRV" && exec python3 server.py 39401 2>logs/api.log) &
PIDS+=($!)
(cd "$SRV/static" && exec python3 -m http.server 39404 --bind 127.0.0.1 >../logs/static.log 2>&1) &
PIDS+=($!)
nginx -p "$SRV/" -c "$SRV/nginx.conf"
wait_port 39401; wait_port 39402; wait_port 39403; wait_port 39404

V="curl --version | sed -n 1p"
P=http-orders

# Failures
record http conn-refused $P curl "$V" -- curl -sS http://127.0.0.1:39499/v1/orders
record http dns-unknown-host $P curl "$V" -- curl -sS http://orders-api.internal:8080/v1/orders
record http not-found-404 $P curl "$V" -- curl -i http://127.0.0.1:39401/v1/orders/4242
record http not-found-verbose $P curl "$V" -- curl -v http://127.0.0.1:39401/v1/orders/4242
record http unauthorized-401 $P curl "$V" -- curl -i http://127.0.0.1:39401/v1/admin/audit -H "'Authorization: Bearer s3cret-admin'"
record http rate-limited-429 $P curl "$V" -- \
  "for i in 1 2 3 4; do curl -sS -i 'http://127.0.0.1:39401/v1/search?q=acme'; echo; done"
record http server-error-500-html $P curl "$V" -- curl -i http://127.0.0.1:39401/v1/reports/daily
record http empty-reply $P curl "$V" -- curl -sS http://127.0.0.1:39401/v1/invoices/1001
record http validation-422-json $P curl "$V" -- \
  curl -sS --fail-with-body -X POST http://127.0.0.1:39401/v1/orders -H "'Content-Type: application/json'" \
  -d "'{\"customer\": \"acme\", \"items\": [{\"sku\": \"BOLT-M6\", \"qty\": 50}, {\"sku\": \"\", \"qty\": 0}]}'"
record http server-log-traceback $P tail "tail --version | sed -n 1p" -- tail -n 25 logs/api.log
record http timeout $P curl "$V" -- curl -sS --max-time 1 http://127.0.0.1:39401/v1/reports/slow
record http nginx-502-bad-gateway $P curl "$V" -- curl -i http://127.0.0.1:39402/api/billing/invoices/1001
record http nginx-504-gateway-timeout $P curl "$V" -- curl -sS -i http://127.0.0.1:39402/api/reports/slow
record http nginx-503-limit-req $P curl "$V" -- \
  "for i in 1 2 3; do curl -sS -o /dev/null -w '%{http_code} %{url_effective}\n' 'http://127.0.0.1:39402/api/search?q=glob'; done; curl -sS 'http://127.0.0.1:39402/api/search?q=glob'"
record http tls-self-signed $P curl "$V" -- curl -sS https://127.0.0.1:39403/v1/orders

# Successes
record http ok-json $P curl "$V" -- curl -sS http://127.0.0.1:39401/v1/orders
record http ok-headers $P curl "$V" -- curl -sS -i http://127.0.0.1:39404/openapi.json
record http ok-create-201 $P curl "$V" -- \
  curl -sS -i -X POST http://127.0.0.1:39402/api/orders -H "'Content-Type: application/json'" \
  -d "'{\"customer\": \"hooli\", \"items\": [{\"sku\": \"WASHER-M6\", \"qty\": 500, \"unit_price\": 0.02}]}'"

refresh_labels http
