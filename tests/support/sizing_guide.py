"""The figures docs/operations/redis.md's "Sizing Redis" quotes, read from its table, so the
tests hold the page to what devtools/redis_sizing.py measures and to its own arithmetic."""

from __future__ import annotations

import re
from dataclasses import dataclass

from devtools.local import ROOT

GUIDE = ROOT / "docs" / "operations" / "redis.md"


@dataclass(frozen=True)
class Documented:
    """Bytes, as the table gives them (measured at 300 rows a job)."""

    waiting_row: int  # a typical row submitted, waiting for its turn
    message: int  # a message in the broker
    finished_row: int  # a typical row finished
    celery_per_row: int  # of which Celery's records
    row_apart: int  # a row bringing its own questions, apart from them
    question: int  # each question of such a row


def _numbers(cell: str) -> list[int]:
    return [int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", cell)]


def guide_text() -> str:
    return GUIDE.read_text(encoding="utf-8").split("## Sizing the archive")[0]


def documented() -> Documented:
    """The table's bytes, each row found by what it describes."""
    rows = {
        what.strip(): _numbers(figure)
        for what, figure in re.findall(r"^\| (.+?) \| (.+?) \|$", guide_text(), re.MULTILINE)
    }

    def row(words: str) -> list[int]:
        (found,) = [numbers for what, numbers in rows.items() if words in what]
        return found

    (waiting,) = row("submitted and waiting")
    (message,) = row("a message in the broker")
    finished, celery = row("the same row, finished")
    (apart,) = row("apart from its questions")
    (question,) = row("each question of such a row")
    return Documented(waiting, message, finished, celery, apart, question)
