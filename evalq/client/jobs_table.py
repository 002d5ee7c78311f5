"""`evalq jobs` as a table that fits a terminal of 80 columns: long names and file names wrap
inside their cells (never cut with "…"), since the name is how people tell their jobs apart."""

from __future__ import annotations

from collections.abc import Iterable

from rich import box
from rich.table import Table

from evalq.client.job_lines import created, short_paths
from evalq.client.visible import shown
from evalq.core.models import JobSummary


def jobs_table(summaries: Iterable[JobSummary]) -> Table:
    """One row per job, two lines high: the id above its name, the dataset above its date, the
    metric above who submitted it (its owner), so the figures keep their columns at 80
    characters. A dataset shows as much of its path as tells it apart from the others listed
    (`a/pairwise.jsonl`, `b/pairwise.jsonl`; the file's name alone when that is enough). Long
    names and paths fold inside their cells; nothing is cut."""
    listed = list(summaries)
    datasets = short_paths(s.dataset for s in listed)
    table = Table(
        box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1), collapse_padding=True
    )
    table.add_column("job / name", overflow="fold", min_width=12)
    table.add_column("dataset / created", overflow="fold", min_width=16)
    table.add_column("metric / owner", overflow="fold", min_width=12)
    table.add_column("status", no_wrap=True)
    table.add_column("rows", justify="right", no_wrap=True)
    table.add_column("mean", justify="right", no_wrap=True)
    for s in listed:
        mean = "n/a" if s.mean_score is None else f"{s.mean_score:.3f}"
        table.add_row(  # names, paths, even a metric or a status read back: shown, never sent
            f"{shown(s.job_id)}\n{shown(s.name or '-')}",
            f"{shown(datasets.get(s.dataset, '-'))}\n{created(s.created_at)}",
            f"{shown(s.metric)}\n{shown(s.owner or '-')}",
            shown(s.status) + ("\nsimulated" if s.simulated else ""),
            f"{s.rows_done}/{s.rows_total}",
            mean,
        )
    return table
