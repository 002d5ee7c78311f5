"""`evalq jobs` as a table that fits a terminal of 80 columns: long names and file names wrap
inside their cells (never cut with "…"), since the name is how people tell their jobs apart."""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import PurePath

from rich import box
from rich.markup import escape
from rich.table import Table

from evalq.core.models import JobSummary

DATE_FORMAT = "%Y-%m-%d %H:%M"  # local time, to the minute


def created(summary: JobSummary) -> str:
    if summary.created_at is None:
        return "-"
    return time.strftime(DATE_FORMAT, time.localtime(summary.created_at))


def dataset_name(summary: JobSummary) -> str:
    """The file's name alone: its folder is in `evalq status --json` and rarely tells jobs apart."""
    return PurePath(summary.dataset).name if summary.dataset else "-"


def jobs_table(summaries: Iterable[JobSummary]) -> Table:
    """One row per job, two lines high: the id above its name, the dataset above its date, so
    the figures keep their columns at 80 characters. Long names and file names fold inside
    their cells; nothing is cut."""
    table = Table(
        box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1), collapse_padding=True
    )
    table.add_column("job / name", overflow="fold", min_width=12)
    table.add_column("dataset / created", overflow="fold", min_width=16)
    table.add_column("metric", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("rows", justify="right", no_wrap=True)
    table.add_column("mean", justify="right", no_wrap=True)
    for s in summaries:
        mean = "n/a" if s.mean_score is None else f"{s.mean_score:.3f}"
        table.add_row(
            f"{s.job_id}\n{escape(s.name or '-')}",
            f"{escape(dataset_name(s))}\n{created(s)}",
            s.metric,
            s.status + ("\nsimulated" if s.simulated else ""),
            f"{s.rows_done}/{s.rows_total}",
            mean,
        )
    return table
