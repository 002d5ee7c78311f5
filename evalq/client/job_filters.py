"""`evalq jobs --since`: a date, a date and time (local), or an age ("7d", "12h"), as the
epoch second the history starts at."""

from __future__ import annotations

import re
import time
from datetime import datetime

AGE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*")
UNITS_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
FORMATS = ("%Y-%m-%d", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S")


class SinceError(ValueError):
    """A --since value that is neither a date nor an age."""


def parse_since(text: str, now: float | None = None) -> float:
    now = time.time() if now is None else now
    if match := AGE.fullmatch(text):
        return now - float(match.group(1)) * UNITS_S[match.group(2)]
    for layout in FORMATS:
        try:
            return datetime.strptime(text.strip(), layout).timestamp()  # local time
        except ValueError:
            continue
    raise SinceError(
        f"--since {text!r}: give a date (2026-11-01), a local date and time "
        "(2026-11-01 14:30) or an age (90m, 12h, 7d, 2w)"
    )
