"""Human-facing output: the summary table, results as JSONL/CSV."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from evalq.client.human_view import status_lines
from evalq.core.models import CandidateSummary, GroupSummary, JobSummary, RowResult

if TYPE_CHECKING:  # types only: `evalq status` of an online job loads neither
    from evalq.core.dry_report import DryRunReport
    from worker.batch.ledger import BatchRecord

SIMULATED_BANNER = (
    "SIMULATED JUDGE: verdicts come from evalq's fake Gemini server, not a real model"
)


def figure_text(value: float | None, signed: bool = False) -> str:
    """A score or mean to three places (a difference ``signed``); `n/a` where it is missing,
    as every table and page of evalq shows them."""
    if value is None:
        return "n/a"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def p_text(value: float | None) -> str:
    """A p-value: three places, or two significant figures under 0.001 (never a bare 0)."""
    if value is None:
        return "n/a"
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def _brief(value: object) -> str:
    """Metric-specific figures, compact: floats to 3 places, mappings as k=v."""
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_brief(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_brief(v) for v in value) + "]"
    return str(value)


def _interval(bounds: tuple[float, float] | None) -> str:
    return "n/a" if bounds is None else f"[{bounds[0]:.3f}, {bounds[1]:.3f}]"


def tag_line(s: JobSummary, tag: str, score: float) -> str:
    """A tag's score with its own interval and row count, so 3 rows don't read like 300."""
    bounds = s.tag_ci95.get(tag)
    method = s.tag_ci_method.get(tag)
    ci = f"  95% CI {_interval(bounds)} ({method})" if bounds is not None else ""
    return f"{score:.3f}{ci} · {s.tag_counts.get(tag, 0)} rows"


def summary_table(s: JobSummary) -> Table:
    title = f"evalq job {s.job_id} · {s.metric} · judge {s.judge_model}" + (
        " (SIMULATED)" if s.simulated else ""
    )
    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value")
    scored_rows = s.rows_scored + s.rows_partial
    ci = (
        f"{_interval(s.ci95)} ({s.ci_method}, {scored_rows} rows)"
        if s.ci95
        else "n/a (no scored rows)"
    )
    table.add_row("status", f"{s.status} ({s.rows_done}/{s.rows_total} rows)")
    if s.pause_reason:
        table.add_row(
            "paused because", f"{s.pause_reason}; continue with `evalq resume {s.job_id}`"
        )
    if (errors := task_errors_line(s, time.time())) is not None:
        table.add_row("task errors", errors)
    if s.mode == "online" and s.status != "finished":
        table.add_row("turns", turns_line(s))
    if s.candidates:  # each model's own figures are the headline; the pooled mean is labelled
        for name, c in s.candidates.items():
            table.add_row(f"candidate {name}", candidate_line(c))
            for tag, score in c.tag_scores.items():
                table.add_row(f"  tag {tag}", f"{score:.3f} · {c.tag_counts.get(tag, 0)} rows")
        table.add_row(
            f"mean score ({s.mean_score_scope})", f"{figure_text(s.mean_score)}  95% CI {ci}"
        )
    else:
        table.add_row("mean score", f"{figure_text(s.mean_score)}  95% CI {ci}")
    table.add_row(
        "rows", f"scored {s.rows_scored} · partial {s.rows_partial} · failed {s.rows_failed}"
    )
    if s.rows_failed_by_reason:
        table.add_row(
            "failed rows by reason",
            ", ".join(f"{k} {v}" for k, v in s.rows_failed_by_reason.items()),
        )
    unscored = ", ".join(f"{k} {v}" for k, v in s.unscored_by_reason.items()) or "none"
    table.add_row("unscored questions", unscored)
    for tag, score in s.tag_scores.items():
        label = f"  tag {tag}" + (" (pooled)" if s.candidates else "")
        table.add_row(label, tag_line(s, tag, score))
    for group in s.groups:
        table.add_row(group_label(group), group_line(group))
    for label, value in status_lines(s.human_agreement):
        table.add_row(label, value)
    if s.column_map:
        mapped = ", ".join(f"{field} <- {column}" for field, column in s.column_map.items())
        table.add_row("columns mapped", mapped)
    table.add_row(
        "judge calls",
        f"{s.judge_calls} (retries {s.retries}, 429s {s.rate_limited}, rubric cache hits {s.rubric_cache_hits})",
    )
    table.add_row("tokens", f"prompt {s.prompt_tokens} · output {s.output_tokens}")
    for role, tokens in s.tokens_by_role.items():
        table.add_row(f"  {role}", role_tokens(tokens, s.cost_by_role.get(role), s))
    table.add_row("cost", cost_line(s))
    table.add_row("thinking", _thinking(s))
    if s.candidate_calls:
        table.add_row(
            "model under test",
            f"{s.candidate_calls} calls · prompt {s.candidate_prompt_tokens} · output {s.candidate_output_tokens} tokens",
        )
    for name, c in s.candidates.items():
        for key, value in c.metric_summary.items():
            table.add_row(f"{name}: {key.replace('_', ' ')}", _brief(value))
    for key, value in s.metric_summary.items():
        pooled = " (pooled)" if s.candidates else ""
        table.add_row(key.replace("_", " ") + pooled, _brief(value))
    if s.elapsed_s is not None:
        table.add_row("elapsed", f"{s.elapsed_s:.1f} s")
    return table


def turns_line(s: JobSummary) -> str:
    """The job's place on shared workers (worker.turns)."""
    cap = f" (at most {s.max_in_flight})" if s.max_in_flight else ""
    return (
        f"priority {s.priority} · {s.rows_in_flight} rows in flight{cap} · "
        f"{s.rows_waiting} waiting; `evalq turns {s.job_id}` changes them"
    )


def candidate_line(c: CandidateSummary) -> str:
    """One candidate's mean with its interval and its rows (multi-candidate jobs)."""
    scored = c.rows_scored + c.rows_partial
    ci = f"95% CI {_interval(c.ci95)} ({c.ci_method}, {scored} rows)" if c.ci95 else "no CI"
    return (
        f"{figure_text(c.mean_score)}  {ci} · scored {c.rows_scored} · partial {c.rows_partial} · "
        f"failed {c.rows_failed}"
    )


def group_label(g: GroupSummary) -> str:
    """A group's row label: its column and value, and its candidate in a multi-candidate job."""
    who = f" · {g.candidate}" if g.candidate is not None else ""
    return f"{g.column}={g.value}{who}"


def group_line(g: GroupSummary) -> str:
    """One group's mean with its own interval and row count, then its tag scores."""
    ci = f"95% CI {_interval(g.ci95)} ({g.ci_method})" if g.ci95 else "no CI"
    tags = "".join(f" · {tag} {score:.3f}" for tag, score in g.tag_scores.items())
    return f"{figure_text(g.mean_score)}  {ci} · {g.rows} rows ({g.rows_scored} scored){tags}"


def money(value: float | None) -> str:
    """Dollars, or "unknown" (never $0 for what could not be priced)."""
    if value is None:
        return "unknown"
    return f"${value:.4f}" if value < 100 else f"${value:,.2f}"


def role_tokens(tokens: dict[str, int], cost: float | None, s: JobSummary) -> str:
    """One role's billed calls and tokens, and what they cost."""
    line = (
        f"{tokens.get('calls', 0)} calls · prompt {tokens.get('prompt', 0)} · "
        f"output {tokens.get('output', 0)} · thinking {tokens.get('thought', 0)}"
    )
    if tokens.get("cached"):
        line += f" · cached {tokens['cached']}"
    return f"{line} · {money(cost)}" if s.usage else line


def cost_line(s: JobSummary) -> str:
    """The job's cost, by role, with the price date, and what kind of figure it is."""
    if not s.usage:
        text = "$0 (no billed call: every reply came from the cache, or none was needed)"
    else:
        by_role = " · ".join(f"{role} {money(cost)}" for role, cost in s.cost_by_role.items())
        text = f"{money(s.cost_usd)} ({by_role})"
        if s.price_date:
            text += f" at prices of {s.price_date}"
        if s.cost_note:
            text += f"; {s.cost_note}"
    if s.simulated:
        text += (
            "; ESTIMATE: the simulated judge's token counts at Google's prices, nothing was billed"
        )
    if s.max_cost_usd is not None:
        text += f"; cap {money(s.max_cost_usd)} (spent {money(s.spent_usd)})"
    return text


def _thinking(s: JobSummary) -> str:
    """Per role as configured, then the thought tokens it cost (billed as output)."""
    roles = " · ".join(f"{role} {value}" for role, value in s.thinking.items()) or "not set"
    spent = f"{s.thought_tokens} thought tokens"
    if s.candidate_thought_tokens:
        spent += f" (+{s.candidate_thought_tokens} by the model under test)"
    return f"{roles}; {spent}"


def print_summary(console: Console, s: JobSummary) -> None:
    if s.simulated:
        console.print(f"[bold yellow]{SIMULATED_BANNER}[/]")
    console.print(summary_table(s))
    if s.batch is not None:
        console.print(
            f"batch mode: {s.batch.get('submitted', 0)} batches sent, "
            f"{s.batch.get('ended_unanswered', 0)} ended unanswered; "
            f"{s.batch.get('on_expiry_means', '')}; priced at the {s.batch.get('price', '')}"
        )
        troubles = {
            "results matched to no request (no key echoed)": s.batch.get("results_unmatched", 0),
            "results with a key the batch never sent": s.batch.get("results_unknown_key", 0),
            "unreadable results lines": s.batch.get("results_unreadable", 0),
            "requests the batch returned nothing for": s.batch.get("results_missing", 0),
            "requests sent again after a transient error": s.batch.get("requests_retried", 0),
        }
        for what, number in troubles.items():
            if number:
                console.print(f"[yellow]batch results:[/] {number} {what}")
    for warning in s.warnings:
        console.print(f"[yellow]warning:[/] {warning}")


def results_jsonl(rows: Iterable[RowResult]) -> Iterable[str]:
    for row in rows:
        # A one-candidate job's lines stay as they were: no candidate key.
        yield row.model_dump_json(exclude={"candidate"} if row.candidate is None else None) + "\n"


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
    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value")
    table.add_row("dataset", p.dataset)
    table.add_row(
        "rows",
        f"{p.rows_planned} planned · {p.rows_rejected} would fail (input_error) · "
        f"{p.rows_total} in all",
    )
    for row in p.rejected[:20]:
        table.add_row(f"  line {row.line}", row.error)
    if len(p.rejected) > 20:
        table.add_row("  ...", f"{len(p.rejected) - 20} more (see --json)")
    for name, value in p.counts.items():
        table.add_row(name.replace("_", " "), str(value))
    for c in p.calls:
        table.add_row(
            f"{c.role} · {c.model}",
            f"{c.calls} calls · prompt {c.prompt_tokens} · output ~{c.output_tokens} · "
            f"thinking up to {c.thought_tokens} · {money(c.cost_usd)}",
        )
    table.add_row(
        "total",
        f"{p.calls_total} calls · prompt {p.prompt_tokens} · output ~{p.output_tokens} · "
        f"thinking up to {p.thought_tokens} tokens",
    )
    cost = f"online {money(p.cost_usd)} (an estimate"
    cost += f", prices of {p.price_date})" if p.price_date else ")"
    if p.cost_usd_batch is not None:
        cost += f"; batch {money(p.cost_usd_batch)} with --mode batch (Batch API prices)"
    if p.cost_note:
        cost += f"; {p.cost_note}"
    table.add_row("cost", cost)
    if p.time_s is None:
        table.add_row("time", p.time_note or "not estimated")
    else:
        table.add_row("time", f"{_duration(p.time_s)} {p.time_note or ''}".strip())
    thinking = " · ".join(f"{role} {value}" for role, value in p.thinking.items())
    table.add_row("thinking", thinking or "not set")
    table.add_row("text tokens", p.token_method)
    for note in p.notes:
        table.add_row("note", note)
    return table


def print_dry_run(console: Console, p: DryRunReport) -> None:
    console.print(dry_run_table(p))
    for warning in p.warnings:
        console.print(f"[yellow]warning:[/] {warning}")


def batches_table(records: Iterable[BatchRecord], now: float) -> Table:
    """A batch-mode job's batches: state, request counts and age (evalq status; batch_notes
    says when each was last polled and what last went wrong with it)."""
    table = Table(title="batches", show_header=True)
    for column in ("batch", "round", "model", "source", "state", "requests", "ok", "failed", "age"):
        table.add_column(column)
    for r in records:
        age = r.age_s(now)
        state = "INGESTED" if r.ingested else r.state
        table.add_row(
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
    poll or an ingest of it met (kept out of the table, which a long error would not fit)."""
    lines = []
    for r in records:
        polled = (
            "never polled" if r.last_poll_at is None else f"polled {ago(now - r.last_poll_at)} ago"
        )
        line = f"batch {r.id} ({r.name or r.display_name}): {polled}"
        if r.last_error is not None:
            when = "" if r.last_error_at is None else f" {ago(now - r.last_error_at)} ago"
            line += f"; last error{when}: {r.last_error}"
        lines.append(line)
    return lines


def ago(seconds: float) -> str:
    """A time span, read at a glance: 4 s, 12 min, 3.5 h."""
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def task_errors_line(s: JobSummary, now: float) -> str | None:
    """How many exceptions escaped the job's tasks, and the last: which task, how long ago,
    what (None when there were none)."""
    errors = s.task_errors
    if errors is None:
        return None
    where = f" in {errors.task}" if errors.task else ""
    when = f" {ago(now - errors.at)} ago" if errors.at is not None else ""
    return f"{errors.count} · last{where}{when}: {errors.last_error or '?'}"
