"""The rich tables a command prints once: the dry run, a batch-mode job's batches, and
`evalq jobs`. The job summary, which `evalq status` prints, is
evalq.client.output.terminal.summary."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from rich import box
from rich.console import Console
from rich.table import Table

from evalq.client.jobs.listing import created, short_paths
from evalq.client.jobs.lookup import handle
from evalq.client.output.formats import ago, money
from evalq.client.output.terminal.visible import shown, visible
from evalq.core.models import JobSummary

if TYPE_CHECKING:  # types only: `evalq status` of an online job loads neither
    from evalq.core.dry_report import DryRunReport
    from evalq.worker.batch.ledger import BatchRecord


def _add(table: Table, *cells: str) -> None:
    """A row of the user's datasets, models and errors: shown as written, never read as markup,
    nothing in it sent to the terminal raw (evalq.client.output.terminal.visible)."""
    table.add_row(*(shown(cell) for cell in cells))


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def dry_run_table(p: DryRunReport) -> Table:
    """One table: what the job would ask, its tokens, cost and time; nothing was run."""
    title = (
        f"evalq dry run · {p.metric} · judge {', '.join(p.judge_models)} · "
        "nothing enqueued, no model called"
    )
    table = Table(title=shown(title), show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value")
    _add(table, "dataset", p.dataset)
    _add(
        table,
        "rows",
        f"{p.rows_planned} planned · {p.rows_rejected} would fail (input_error) · "
        f"{p.rows_total} in all",
    )
    for row in p.rejected[:20]:
        _add(table, f"  line {row.line}", row.error)
    if len(p.rejected) > 20:
        _add(table, "  ...", f"{len(p.rejected) - 20} more (see --json)")
    for name, value in p.counts.items():
        _add(table, name.replace("_", " "), str(value))
    for c in p.calls:
        _add(
            table,
            f"{c.role} · {c.model}",
            f"{c.calls} calls · prompt {c.prompt_tokens} · output ~{c.output_tokens} · "
            f"thinking up to {c.thought_tokens} · {money(c.cost_usd)}",
        )
    _add(
        table,
        "total",
        f"{p.calls_total} calls · prompt {p.prompt_tokens} · output ~{p.output_tokens} · "
        f"thinking up to {p.thought_tokens} tokens",
    )
    if p.calls_min is not None:  # adaptive repeats: every verdict decided early .. none
        _add(
            table,
            "calls (range)",
            f"{p.calls_min}..{p.calls_total} ({money(p.cost_usd_min)}..{money(p.cost_usd)}): "
            "every verdict decided at the minimum .. every one asked to the maximum",
        )
    cost = f"online {money(p.cost_usd)} (an estimate"
    cost += f", prices of {p.price_date})" if p.price_date else ")"
    if p.cost_usd_batch is not None:
        cost += f"; batch {money(p.cost_usd_batch)} with --mode batch (Batch API prices)"
    if p.cost_note:
        cost += f"; {p.cost_note}"
    if p.price_note:
        cost += f"; {p.price_note}"
    _add(table, "cost", cost)
    if p.time_s is None:
        _add(table, "time", p.time_note or "not estimated")
    else:
        _add(table, "time", f"{_duration(p.time_s)} {p.time_note or ''}".strip())
    thinking = " · ".join(f"{role} {value}" for role, value in p.thinking.items())
    _add(table, "thinking", thinking or "not set")
    _add(table, "text tokens", p.token_method)
    for note in p.notes:
        _add(table, "note", note)
    return table


def print_dry_run(console: Console, p: DryRunReport) -> None:
    console.print(dry_run_table(p))
    for warning in p.warnings:
        console.print(f"[yellow]warning:[/] {shown(warning)}")


def batches_table(records: Iterable[BatchRecord], now: float) -> Table:
    """A batch-mode job's batches: state, request counts and age (evalq status; batch_notes
    says when each was last polled and what last went wrong with it)."""
    table = Table(title="batches", show_header=True)
    for column in ("batch", "round", "model", "source", "state", "requests", "ok", "failed", "age"):
        table.add_column(column)
    for r in records:
        age = r.age_s(now)
        state = "INGESTED" if r.ingested else r.state
        _add(
            table,
            r.name or r.display_name,
            str(r.round),
            r.model,
            r.source,
            state,
            str(r.requests),
            str(r.succeeded),
            str(r.failed),
            "-" if age is None else f"{age:.0f} s",
        )
    return table


def batch_notes(records: Iterable[BatchRecord], now: float) -> list[str]:
    """One line per batch: the time since its last poll that answered, and the last error a
    poll or an ingest of it met (kept out of the table, which a long error would not fit),
    shown as evalq.client.output.terminal.visible shows text (plain: print it without markup)."""
    lines = []
    for r in records:
        polled = (
            "never polled" if r.last_poll_at is None else f"polled {ago(now - r.last_poll_at)} ago"
        )
        line = f"batch {r.id} ({r.name or r.display_name}): {polled}"
        if r.last_error is not None:
            when = "" if r.last_error_at is None else f" {ago(now - r.last_error_at)} ago"
            line += f"; last error{when}: {r.last_error}"
        lines.append(visible(line))
        if r.ignored_objects:
            some = ", ".join(r.ignored_names)
            more = "" if r.ignored_objects <= len(r.ignored_names) else ", ..."
            noun = "object" if r.ignored_objects == 1 else "objects"
            lines.append(
                visible(
                    f"batch {r.id}: {r.ignored_objects} {noun} in its output folder ignored, "
                    f"never read: {some}{more}"
                )
            )
    return lines


def jobs_table(summaries: Iterable[JobSummary], *, handles: bool = False) -> Table:
    """One row per job, two lines high: the id above its name, the dataset above its date, the
    metric above who submitted it (its owner), so the figures keep their columns at 80
    characters. A dataset shows as much of its path as tells it apart from the others listed
    (`a/pairwise.jsonl`, `b/pairwise.jsonl`; the file's name alone when that is enough). A
    name wraps between its words, one word too long for the column ending in an ellipsis,
    never cut mid-word (the id above it names the job whole); paths fold inside their cells. `handles`: jobs of one name, the
    newest first, each named as a command takes it (NAME, NAME~1, ...)."""
    listed = list(summaries)
    datasets = short_paths(s.dataset for s in listed)
    table = Table(
        box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1), collapse_padding=True
    )
    table.add_column("job / name", overflow="ellipsis", min_width=12)
    table.add_column("dataset / created", overflow="fold", min_width=16)
    table.add_column("metric / owner", overflow="fold", min_width=12)
    table.add_column("status", no_wrap=True)
    table.add_column("rows", justify="right", no_wrap=True)
    table.add_column("mean", justify="right", no_wrap=True)
    for nth, s in enumerate(listed):
        mean = "n/a" if s.mean_score is None else f"{s.mean_score:.3f}"
        name = handle(s.name, nth) if handles and s.name else s.name or "-"
        table.add_row(  # names, paths, even a metric or a status read back: shown, never sent
            f"{shown(s.job_id)}\n{shown(name)}",
            f"{shown(datasets.get(s.dataset, '-'))}\n{created(s.created_at)}",
            f"{shown(s.metric)}\n{shown(s.owner or '-')}",
            shown(s.status) + ("\nsimulated" if s.simulated else ""),
            f"{s.rows_done}/{s.rows_total}",
            mean,
        )
    return table
