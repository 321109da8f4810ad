"""A tiny orders API for local testing: python3 server.py [PORT].

Routes:
  GET  /healthz                  liveness
  GET  /v1/orders                list orders
  GET  /v1/orders/<id>           one order (404 when unknown)
  POST /v1/orders                create an order (422 on validation errors)
  GET  /v1/admin/audit           needs "Authorization: Bearer <token>"
  GET  /v1/search?q=             rate limited: 3 calls per 10 s per X-Client-Id (or address)
  GET  /v1/reports/daily         revenue per day
  GET  /v1/reports/slow          a report that takes its time
  GET  /v1/invoices/<id>         an order's invoice
"""
import json
import sys
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

ADMIN_TOKEN = "s3cr3t-admin"
SEARCH_LIMIT = 3
SEARCH_WINDOW = 10.0

ORDERS = {
    1001: {"id": 1001, "customer": "acme", "items": [{"sku": "BOLT-M6", "qty": 200, "unit_price": 0.12}], "status": "shipped"},
    1002: {"id": 1002, "customer": "globex", "items": [{"sku": "NUT-M6", "qty": 150, "unit_price": 0.08}], "status": "pending"},
    1003: {"id": 1003, "customer": "initech", "items": [], "status": "draft"},
}
_search_calls = {}


class OrdersHandler(BaseHTTPRequestHandler):
    server_version = "orders-api/0.3"

    def log_message(self, fmt, *args):
        sys.stderr.write("%s - %s\n" % (self.address_string(), fmt % args))

    def send_json(self, status, body, headers=None):
        data = json.dumps(body, indent=2).encode() + b"\n"
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def api_error(self, status, code, message, details=None, headers=None):
        err = {"code": code, "message": message}
        if details:
            err["details"] = details
        self.send_json(status, {"error": err}, headers)

    def do_GET(self):
        url = urlparse(self.path)
        parts = [p for p in url.path.split("/") if p]
        if url.path == "/healthz":
            return self.send_json(200, {"status": "ok"})
        if parts[:2] == ["v1", "orders"] and len(parts) == 2:
            return self.send_json(200, {"orders": list(ORDERS.values()), "next_page_token": ""})
        if parts[:2] == ["v1", "orders"] and len(parts) == 3:
            order = ORDERS.get(int(parts[2]))
            if order is None:
                return self.api_error(404, "order_not_found", "order %s does not exist" % parts[2])
            return self.send_json(200, order)
        if parts[:2] == ["v1", "admin"]:
            if self.headers.get("Authorization") != "Bearer " + ADMIN_TOKEN:
                return self.api_error(401, "unauthenticated", "missing or invalid bearer token",
                                      headers={"WWW-Authenticate": 'Bearer realm="orders-admin", error="invalid_token"'})
            return self.send_json(200, {"events": []})
        if parts[:2] == ["v1", "search"]:
            return self.search(parse_qs(url.query).get("q", [""])[0])
        if parts[:2] == ["v1", "reports"]:
            try:
                return self.report(parts[2] if len(parts) > 2 else "")
            except Exception as exc:  # the report routes answer 500 with the default error page
                traceback.print_exc()
                return self.send_error(500, "Internal Server Error", "report failed: %r" % exc)
        if parts[:2] == ["v1", "invoices"] and len(parts) == 3:
            return self.invoice(int(parts[2]))
        return self.api_error(404, "not_found", "no route for GET %s" % url.path)

    def do_POST(self):
        if urlparse(self.path).path != "/v1/orders":
            return self.api_error(404, "not_found", "no route for POST %s" % self.path)
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError as exc:
            return self.api_error(400, "malformed_json", str(exc))
        violations = []
        if not body.get("customer"):
            violations.append({"field": "customer", "description": "must not be empty"})
        for i, item in enumerate(body.get("items") or []):
            if not item.get("sku"):
                violations.append({"field": "items[%d].sku" % i, "description": "must not be empty"})
            if int(item.get("qty", 0)) <= 0:
                violations.append({"field": "items[%d].qty" % i, "description": "must be greater than 0, got %s" % item.get("qty")})
        if violations:
            return self.api_error(422, "validation_failed", "order has %d invalid field(s)" % len(violations), violations)
        new_id = max(ORDERS) + 1
        ORDERS[new_id] = dict(body, id=new_id, status="pending")
        return self.send_json(201, ORDERS[new_id], {"Location": "/v1/orders/%d" % new_id})

    def search(self, q):
        client = self.headers.get("X-Client-Id") or self.client_address[0]
        now = time.monotonic()
        calls = [t for t in _search_calls.get(client, []) if now - t < SEARCH_WINDOW]
        if len(calls) >= SEARCH_LIMIT:
            retry = int(SEARCH_WINDOW - (now - calls[0])) + 1
            return self.api_error(429, "rate_limited", "search is limited to %d calls per %ds" % (SEARCH_LIMIT, SEARCH_WINDOW),
                                  headers={"Retry-After": str(retry)})
        _search_calls[client] = calls + [now]
        hits = [o for o in ORDERS.values() if q in o["customer"]]
        return self.send_json(200, {"query": q, "orders": hits})

    def report(self, name):
        if name == "slow":
            time.sleep(5)
            return self.send_json(200, {"report": "slow", "rows": []})
        if name == "daily":
            rows = []
            for order in ORDERS.values():
                total = sum(i["qty"] * i["unit_price"] for i in order["items"])
                # average unit price of the order
                avg = total / sum(i["qty"] for i in order["items"])
                rows.append({"order": order["id"], "total": round(total, 2), "avg_unit_price": round(avg, 4)})
            return self.send_json(200, {"report": "daily", "rows": rows})
        return self.api_error(404, "report_not_found", "no report named %r" % name)

    def invoice(self, order_id):
        order = ORDERS[order_id]
        lines = ["%s x%d" % (i["sku"], i["qty"]) for i in order["items"]]
        self.send_json(200, {"order": order_id, "lines": lines, "total": order["total"]})


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8080
    ThreadingHTTPServer(("127.0.0.1", port), OrdersHandler).serve_forever()
