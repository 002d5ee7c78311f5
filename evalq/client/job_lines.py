"""A job in a line of a list (`evalq jobs`, the candidates of an ambiguous name): when it was
created, local time to the minute, and its dataset's path cut to what tells it apart from the
other datasets listed. Light on purpose (no rich): errors show these too."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from pathlib import PurePath

DATE_FORMAT = "%Y-%m-%d %H:%M"  # local time, to the minute


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
