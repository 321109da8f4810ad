"""The README's quick start, run as written against a real server (only the address differs)."""
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.server import ServerTestCase

PACKAGE = Path(__file__).resolve().parents[1]


class ReadmeTest(ServerTestCase):
    def run_block(self, section: str) -> str:
        readme = (PACKAGE / "README.md").read_text()
        # The section's first block, after any lines of prose (not past the next heading).
        block = re.search(rf"## {section}\n(?:(?!## |```).*\n)*?```python\n((?s:.*?))```", readme)
        self.assertIsNotNone(block, f"no ```python block under ## {section}")
        script = block.group(1).replace("127.0.0.1:50051", self.server.addr)
        env = dict(os.environ, PYTHONPATH=str(PACKAGE / "src"))
        run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)
        return run.stdout

    def test_quick_start(self):
        self.assertRegex(self.run_block("Quick start"), r"^1 \d+ \d+\n$")

    def test_calls_by_reference(self):
        self.assertEqual(self.run_block("Calls by reference"), "6 2 0\n")
