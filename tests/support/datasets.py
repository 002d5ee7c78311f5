"""Datasets as the tests write them: JSON Lines, one row per line."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path


def write_rows(path: Path, rows: Iterable[object]) -> Path:
    """Write each row as one JSON line; a str is written as it is (a malformed line on
    purpose). Returns the path."""
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path
