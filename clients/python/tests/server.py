"""A real `ctxc serve` for the tests: the binary named by CTXC_BIN, else the
repository's bin/ctxc (`make build`). A missing binary fails the tests."""
from __future__ import annotations

import json
import os
import subprocess
import threading
import unittest
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]


class Server:
    def __init__(self, *args: str):
        binary = os.path.abspath(os.environ.get("CTXC_BIN") or REPO_ROOT / "bin" / "ctxc")
        if not os.path.exists(binary):
            raise RuntimeError(f"ctxc binary not found at {binary}: run `make build` in the repository root or set CTXC_BIN")
        env = dict(os.environ, OTEL_TRACES_EXPORTER="", OTEL_EXPORTER_OTLP_ENDPOINT="")
        self.proc = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:0", "--log-format", "json", *args],
                                     cwd=REPO_ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        self.logs: list = []
        self.addr = ""
        ready = threading.Event()

        def read():
            for line in self.proc.stderr:
                self.logs.append(line)
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if entry.get("msg") == "serving" and not self.addr:
                    self.addr = entry["addr"]
                    ready.set()
            ready.set()

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        if not ready.wait(60) or not self.addr:
            self.stop()
            raise RuntimeError("ctxc serve did not start:\n" + "".join(self.logs))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(5)
        if not self.reader.is_alive():
            self.proc.stderr.close()


class ServerTestCase(unittest.TestCase):
    """Starts one server for the test class."""

    server: Server

    @classmethod
    def setUpClass(cls):
        cls.server = Server()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
