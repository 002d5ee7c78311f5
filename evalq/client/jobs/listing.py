"""Jobs listed (`evalq jobs`, evalq.history, the candidates of an ambiguous name): where the list
starts (`--since`), and a job in a line of it. Light on purpose (no rich): errors show these too."""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from pathlib import PurePath

DATE_FORMAT = "%Y-%m-%d %H:%M"  # local time, to the minute
AGE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*")
UNITS_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
FORMATS = ("%Y-%m-%d", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S")


class SinceError(ValueError):
    """A --since value that is neither a date nor an age."""


def parse_since(text: str, now: float | None = None) -> float:
    """The epoch second a list starts at: `text` a date, a local date and time, or an age."""
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


def created(created_at: float | None) -> str:
    if created_at is None:
        return "-"
    return time.strftime(DATE_FORMAT, time.localtime(created_at))


def short_paths(paths: Iterable[str]) -> dict[str, str]:
    """Each path as the shortest trailing part that no other of `paths` ends with: the file's
    name alone when that is unique, else as many of its folders as it takes
    (`a/pairwise.jsonl`, `b/pairwise.jsonl`). The same path given twice is one dataset."""
    distinct = list(dict.fromkeys(p for p in paths if p))
    parts = {p: PurePath(p).parts for p in distinct}
    shown: dict[str, str] = {}
    pending = list(distinct)
    length = 1
    while pending:
        tails = Counter(parts[p][-length:] for p in distinct)
        still = []
        for p in pending:
            tail = parts[p][-length:]
            if tails[tail] == 1 or length >= len(parts[p]):
                shown[p] = str(PurePath(*tail))
            else:
                still.append(p)
        pending = still
        length += 1
    return shown
