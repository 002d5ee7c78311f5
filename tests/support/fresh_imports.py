"""What a fresh interpreter loaded: start-up cost is checked by which modules a probe's code
imported, never by a time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def modules_loaded(code: str, *args: str) -> list[str]:
    """Runs `code` (with `args` as sys.argv[1:]) in a new interpreter at the repository's root;
    the probe prints, as its last line, a JSON list of the modules it found loaded."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        check=False,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded
