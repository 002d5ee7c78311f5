"""scripts/systemd/evalq-worker@.service: systemd accepts it (systemd-analyze verify, with its
ExecStart pointed at a program that exists here), and it restarts a worker whatever way it
ended, without a start limit that would park it during a long Redis outage."""

from __future__ import annotations

import configparser
import shutil
import subprocess
from pathlib import Path

import pytest

from devtools.local import ROOT

UNIT = ROOT / "scripts" / "systemd" / "evalq-worker@.service"


def unit_sections() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(UNIT.read_text())
    return parser


def test_it_restarts_the_worker_always_and_stops_it_warmly() -> None:
    unit = unit_sections()
    assert unit["Service"]["Restart"] == "always"
    assert unit["Unit"]["StartLimitIntervalSec"] == "0"
    assert unit["Service"]["KillSignal"] == "SIGTERM"  # Celery's warm shutdown
    assert unit["Service"]["ExecStart"].split()[1:3] == ["worker", "--hostname"]
    assert "GEMINI_API_KEY" not in unit["Service"]["ExecStart"]  # keys come from the env file


def test_systemd_accepts_it(tmp_path: Path) -> None:
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    here = UNIT.read_text().replace(
        "/opt/evalq/.venv/bin/evalq", shutil.which("true") or "/bin/true"
    )
    unit = tmp_path / "evalq-worker@1.service"
    unit.write_text(here)
    done = subprocess.run(
        ["systemd-analyze", "verify", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "evalq-worker" not in done.stderr, done.stderr  # no complaint about the unit
