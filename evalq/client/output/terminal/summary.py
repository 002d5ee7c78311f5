"""The job summary as `evalq status`, `evalq wait` and `run --wait` print it. Drawn without rich
(evalq.client.output.terminal.text_table), so the status command starts fast."""

from __future__ import annotations

import os
import shutil
import time

import click

from evalq.client.output.formats import (
    SIMULATED_BANNER,
    ago,
    cost_line,
    figure_text,
    interval_text,
    money,
    rows_text,
)
from evalq.client.output.human_agreement import status_lines
from evalq.client.output.noise_floor import noise_rows
from evalq.client.output.terminal.text_table import box_table
from evalq.client.output.terminal.visible import visible
from evalq.core.models import CandidateSummary, GroupSummary, JobSummary

RUBRIC_ROLE = "rubric"  # the judge role that writes question sets (Gecko's, the rubric metric's)


def summary_title(s: JobSummary) -> str:
    on = f" on {s.backend}" if s.backend else ""  # where the judge was asked
    return f"evalq job {s.job_id} · {s.metric} · judge {s.judge_model}{on}" + (
        " (SIMULATED)" if s.simulated else ""
    )


def summary_rows(s: JobSummary) -> list[tuple[str, str]]:
    """The summary table's rows, label then value, in the order a reader looks for them."""
    rows: list[tuple[str, str]] = []

    def add(label: str, value: str) -> None:
        rows.append((label, value))

    scored_rows = s.rows_scored + s.rows_partial
    ci = (
        f"{interval_text(s.ci95)} ({s.ci_method}, {rows_text(scored_rows)})"
        if s.ci95
        else "n/a (no scored rows)"
    )
    add("status", f"{s.status} ({s.rows_done}/{s.rows_total} rows)")
    if s.owner is not None:  # who submitted it: cancel and resume of it take theirs or --force
        add("owner", s.owner)
    if s.regrades is not None:  # the same inputs judged again: `evalq drift` tells them apart
        add("regrades", f"job {s.regrades} (its inputs, judged again)")
    if s.pause_reason:
        add("paused because", f"{s.pause_reason}; continue with `evalq resume {s.job_id}`")
    if s.calls_open_at_cancel is not None:
        add("cancelled with", cancel_line(s.calls_open_at_cancel))
    if (errors := task_errors_line(s, time.time())) is not None:
        add("task errors", errors)
    if s.failover is not None:
        add("Redis failover", s.failover.says())
    if s.mode == "online" and s.status != "finished":
        add("turns", turns_line(s))
    if s.candidates:  # each model's own figures are the headline; the pooled mean is labelled
        for name, c in s.candidates.items():
            add(f"candidate {name}", candidate_line(c))
            for tag, score in c.tag_scores.items():
                add(f"  tag {tag}", f"{score:.3f} · {rows_text(c.tag_counts.get(tag, 0))}")
        add(f"mean score ({s.mean_score_scope})", f"{figure_text(s.mean_score)}  95% CI {ci}")
    else:
        add("mean score", f"{figure_text(s.mean_score)}  95% CI {ci}")
    add("rows", f"scored {s.rows_scored} · partial {s.rows_partial} · failed {s.rows_failed}")
    if s.rows_failed_by_reason:
        add(
            "failed rows by reason",
            ", ".join(f"{k} {v}" for k, v in s.rows_failed_by_reason.items()),
        )
    for label, value in row_error_rows(s):
        add(label, value)
    unscored = ", ".join(f"{k} {v}" for k, v in s.unscored_by_reason.items()) or "none"
    add(f"unscored {s.judged_units or 'verdicts'}", unscored)  # the metric's own word
    for tag, score in s.tag_scores.items():
        label = f"  tag {tag}" + (" (pooled)" if s.candidates else "")
        add(label, tag_line(s, tag, score))
    for group in s.groups:
        add(group_label(group), group_line(group))
    for label, value in status_lines(s.human_agreement):
        add(label, value)
    for label, value in noise_rows(s.noise_floor):
        add(label, value)
    if s.column_map:
        mapped = ", ".join(f"{field} <- {column}" for field, column in s.column_map.items())
        add("columns mapped", mapped)
    writes_rubrics = s.rubric_cache_hits or RUBRIC_ROLE in s.thinking  # a question writer
    reused = f", rubric cache hits {s.rubric_cache_hits}" if writes_rubrics else ""
    add("judge calls", f"{s.judge_calls} (retries {s.retries}, 429s {s.rate_limited}{reused})")
    add("tokens", f"prompt {s.prompt_tokens} · output {s.output_tokens}")
    for role, tokens in s.tokens_by_role.items():
        add(f"  {role}", role_tokens(tokens, s.cost_by_role.get(role), s))
    add("cost", cost_line(s))
    add("thinking", _thinking(s))
    if s.candidate_calls:
        add(
            "model under test",
            f"{s.candidate_calls} calls · prompt {s.candidate_prompt_tokens} · output {s.candidate_output_tokens} tokens",
        )
    for name, c in s.candidates.items():
        for key, value in c.metric_summary.items():
            add(f"{name}: {key.replace('_', ' ')}", _brief(value))
    for key, value in s.metric_summary.items():
        pooled = " (pooled)" if s.candidates else ""
        add(key.replace("_", " ") + pooled, _brief(value))
    if s.elapsed_s is not None:
        add("elapsed", f"{s.elapsed_s:.1f} s")
    return rows


def _brief(value: object) -> str:
    """Metric-specific figures, compact: floats to 3 places, mappings as k=v."""
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_brief(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_brief(v) for v in value) + "]"
    return str(value)


def tag_line(s: JobSummary, tag: str, score: float) -> str:
    """A tag's score with its own interval and row count, so 3 rows don't read like 300."""
    bounds = s.tag_ci95.get(tag)
    method = s.tag_ci_method.get(tag)
    ci = f"  95% CI {interval_text(bounds)} ({method})" if bounds is not None else ""
    return f"{score:.3f}{ci} · {rows_text(s.tag_counts.get(tag, 0))}"


def cancel_line(open_calls: int) -> str:
    """What a cancel left under way: no call starts after it (run_unit and the spend check
    read the status first); those already running finish and their verdicts are kept."""
    return (
        f"{open_calls} judge calls sent and not answered: those already running finish and are "
        "kept, the rest are skipped; no call starts after the cancel"
    )


def turns_line(s: JobSummary) -> str:
    """The job's place on shared workers (evalq.worker.dispatch.turns)."""
    cap = f" (at most {s.max_in_flight})" if s.max_in_flight else ""
    return (
        f"priority {s.priority} · {s.rows_in_flight} rows in flight{cap} · "
        f"{s.rows_waiting} waiting; `evalq turns {s.job_id}` changes them"
    )


def candidate_line(c: CandidateSummary) -> str:
    """One candidate's mean with its interval and its rows (multi-candidate jobs)."""
    scored = c.rows_scored + c.rows_partial
    ci = (
        f"95% CI {interval_text(c.ci95)} ({c.ci_method}, {rows_text(scored)})"
        if c.ci95
        else "no CI"
    )
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
    ci = f"95% CI {interval_text(g.ci95)} ({g.ci_method})" if g.ci95 else "no CI"
    tags = "".join(f" · {tag} {score:.3f}" for tag, score in g.tag_scores.items())
    return f"{figure_text(g.mean_score)}  {ci} · {rows_text(g.rows)} ({g.rows_scored} scored){tags}"


def role_tokens(tokens: dict[str, int], cost: float | None, s: JobSummary) -> str:
    """One role's billed calls and tokens, and what they cost."""
    line = (
        f"{tokens.get('calls', 0)} calls · prompt {tokens.get('prompt', 0)} · "
        f"output {tokens.get('output', 0)} · thinking {tokens.get('thought', 0)}"
    )
    if tokens.get("cached"):
        line += f" · cached {tokens['cached']}"
    return f"{line} · {money(cost)}" if s.usage else line


def _thinking(s: JobSummary) -> str:
    """Per role as configured, then the thought tokens it cost (billed as output)."""
    roles = " · ".join(f"{role} {value}" for role, value in s.thinking.items()) or "not set"
    spent = f"{s.thought_tokens} thought tokens"
    if s.candidate_thought_tokens:
        spent += f" (+{s.candidate_thought_tokens} by the model under test)"
    return f"{roles}; {spent}"


def task_errors_line(s: JobSummary, now: float) -> str | None:
    """How many exceptions escaped the job's tasks, and the last: which task, how long ago,
    what (None when there were none)."""
    errors = s.task_errors
    if errors is None:
        return None
    where = f" in {errors.task}" if errors.task else ""
    when = f" {ago(now - errors.at)} ago" if errors.at is not None else ""
    return f"{errors.count} · last{where}{when}: {errors.last_error or '?'}"


def row_error_rows(s: JobSummary) -> list[tuple[str, str]]:
    """The most common causes of failed rows, a row each ("6 × transport error: ..."), then
    how many failed rows had other causes."""
    errors = s.row_errors
    if errors is None:
        return []
    values = [f"{e.rows} × {e.error}" for e in errors.top]
    if errors.other_rows:
        kinds = f"{errors.other_errors} other error{'s' if errors.other_errors != 1 else ''}"
        values.append(f"{errors.other_rows} more with {kinds} (`evalq results {s.job_id}`)")
    return [("row errors" if i == 0 else "", value) for i, value in enumerate(values)]


def summary_lines(s: JobSummary, width: int) -> list[str]:
    """The whole summary as plain lines of at most `width` cells (no colour)."""
    return box_table(summary_title(s), summary_rows(s), width)


def print_summary(s: JobSummary, *, width: int | None = None) -> None:
    """The summary on standard output: the simulated banner, the table, then batch mode's
    figures and the warnings. Colour only on a terminal (click drops it elsewhere) and never
    with NO_COLOR set, as rich did; the width is COLUMNS, else the terminal's, else 80."""
    width = width or shutil.get_terminal_size().columns
    color = False if os.environ.get("NO_COLOR") else None

    def echo(line: str) -> None:
        click.echo(line, color=color)

    if s.simulated:
        echo(click.style(SIMULATED_BANNER, fg="yellow", bold=True))
    bold = click.style("{}", bold=True)
    for line in box_table(summary_title(s), summary_rows(s), width, label_style=bold):
        echo(line)
    if s.batch is not None:
        echo(
            visible(
                f"batch mode: {s.batch.get('submitted', 0)} batches sent, "
                f"{s.batch.get('ended_unanswered', 0)} ended unanswered; "
                f"{s.batch.get('on_expiry_means', '')}; priced at the {s.batch.get('price', '')}"
            )
        )
        troubles = {
            "results matched to no request (no key echoed)": s.batch.get("results_unmatched", 0),
            "results with a key the batch never sent": s.batch.get("results_unknown_key", 0),
            "unreadable results lines": s.batch.get("results_unreadable", 0),
            "requests the batch returned nothing for": s.batch.get("results_missing", 0),
            "requests sent again after a transient error": s.batch.get("requests_retried", 0),
            "requests answered online once, since results came back with no key to match "
            "them by (never sent in another batch)": s.batch.get("requests_online", 0),
            "requests answered twice in the batch's output: asked again": s.batch.get(
                "results_conflicts", 0
            ),
            "requests answered twice again when asked again: unscored": s.batch.get(
                "results_conflicts_unscored", 0
            ),
            "objects found beside the results in batches' output folders, ignored and never "
            "read (each batch's line names them)": s.batch.get("output_ignored", 0),
        }
        for what, number in troubles.items():
            if number:
                echo(f"{click.style('batch results:', fg='yellow')} {number} {what}")
    for warning in s.warnings:
        echo(f"{click.style('warning:', fg='yellow')} {visible(warning)}")
