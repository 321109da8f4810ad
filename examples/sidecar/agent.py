"""An agent whose context is compiled by ctxc running beside it as a sidecar
(deploy/kubernetes/sidecar/agent.yaml): it reaches ctxc on a Unix socket in a
volume the two containers share, so nothing leaves the pod and no TLS or token
is needed.

It serves POST /turn: an OpenAI Chat Completions message list in, the
messages to send to the model out (compiled by ctxc to fit the model's window),
with the budget. A real agent would send those messages to its model next.

    CTXC_TARGET=unix:///var/run/ctxc/ctxc.sock MODEL=gpt-4o PORT=8000 \\
      PYTHONPATH=clients/python/src /usr/bin/python3 examples/sidecar/agent.py
"""
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import grpc

import ctxc

TARGET = os.environ.get("CTXC_TARGET", "unix:///var/run/ctxc/ctxc.sock")
MODEL = os.environ.get("MODEL", "gpt-4o")
PROFILE = os.environ.get("CTXC_PROFILE", "")
MAX_TOKENS = int(os.environ.get("MAX_CONTEXT_TOKENS", "0")) or None

client = ctxc.Client(TARGET, timeout=10)


class Agent(BaseHTTPRequestHandler):
    def do_POST(self):
        if self.path != "/turn":
            self.send_error(404)
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        try:
            messages = client.compile_openai(body.get("messages", []), body.get("tools"), model=MODEL,
                                             profile=PROFILE, max_tokens=MAX_TOKENS)
        except ValueError as err:  # not a Chat Completions message list
            self.reply(400, {"error": str(err)})
            return
        except ctxc.CtxcError as err:
            status = 400 if err.code == grpc.StatusCode.INVALID_ARGUMENT else 503
            self.reply(status, {"error": err.message, "reason": err.reason})
            return
        self.reply(200, {"messages": messages})

    def do_GET(self):
        # The kubelet's probes: ready once ctxc answers on the socket.
        if self.path != "/healthz":
            self.send_error(404)
            return
        try:
            client.list_profiles(timeout=2)
        except ctxc.CtxcError as err:
            self.reply(503, {"error": err.message})
            return
        self.reply(200, {"status": "ok"})

    def reply(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, fmt, *args):
        pass


if __name__ == "__main__":
    server = ThreadingHTTPServer(("0.0.0.0", int(os.environ.get("PORT", "8000"))), Agent)
    print(f"agent listening on {server.server_address[1]}, ctxc at {TARGET}", flush=True)
    server.serve_forever()
