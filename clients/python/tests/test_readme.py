"""The README's quick start, run as written against a real server (only the address differs)."""
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.server import ServerTestCase

PACKAGE = Path(__file__).resolve().parents[1]


class ReadmeTest(ServerTestCase):
    def test_quick_start(self):
        readme = (PACKAGE / "README.md").read_text()
        block = re.search(r"## Quick start\n\n```python\n(.*?)```", readme, re.S)
        self.assertIsNotNone(block, "no ```python block under ## Quick start")
        script = block.group(1).replace("127.0.0.1:50051", self.server.addr)
        env = dict(os.environ, PYTHONPATH=str(PACKAGE / "src"))
        run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertRegex(run.stdout, r"^1 \d+ \d+\n$")
