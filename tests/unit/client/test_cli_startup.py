"""`evalq --help` loads only what printing the commands needs: not google-genai, Celery, Redis,
pydantic's models or numpy (which took about a second of CPU before any command ran). Checked
by what a fresh interpreter imported, not by a time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
HEAVY = ("google.genai", "celery", "redis", "evalq.core.models", "numpy", "worker.app")
PROBE = f"""
import json, sys
from click.testing import CliRunner
from evalq.client.cli import main
result = CliRunner().invoke(main, ["--help"])
assert result.exit_code == 0, result.output
assert "status" in result.output and "run" in result.output
print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))
"""


def test_help_loads_none_of_the_heavy_modules() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        check=False,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
