"""`evalq status`, `wait`, `jobs`, `results` and `report`: read jobs back. They use the client's reads
alone (evalq.client.reads): no Celery app, dataset loader or google-genai is loaded."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from evalq.client.cli.attach import attached, fail_under_option, finish
from evalq.client.cli.common import (
    echo_json,
    emit,
    err_console,
    file_option,
    job_id_argument,
    job_of,
    json_option,
    make_reader,
    optional_job_argument,
    out_console,
    redis_option,
)
from evalq.client.cli.help import examples
from evalq.client.output.terminal.visible import shown, visible

if TYPE_CHECKING:
    from evalq.client.reads import JobReader

group_by_option = click.option(
    "--group-by",
    "group_by",
    multiple=True,
    metavar="COLUMN",
    help="Also show scores and intervals per value of this dataset column (e.g. category). "
    "Repeatable.",
)


@click.command(epilog=examples("evalq status JOB", "evalq status JOB --group-by category --json"))
@optional_job_argument
@json_option
@group_by_option
@redis_option
def status(
    job: str | None, as_json: bool, group_by: tuple[str, ...], redis_url: str | None
) -> None:
    """Show a job's summary (also while it runs), with the errors that escaped its tasks (how
    many, the last, its task and age); batch mode adds each batch's state, request counts, age,
    time since its last poll and last error. JOB is its id, a unique prefix of it, or its
    --name. A running job with no worker alive in its Redis gets a line on stderr saying so.
    Without JOB, how much memory Redis uses. Either way, a warning on stderr when Redis
    is near its maxmemory."""
    from evalq.client.reads import memory_warning

    reader = make_reader(redis_url)
    job_id = None if job is None else job_of(reader, job)
    address = reader.redis_address()
    live = job_id is None or reader.is_live(job_id)
    if live:
        used, limit = reader.job_reads.memory()  # one INFO memory for the warning and the figures
        if (warning := memory_warning(address, used, limit)) is not None:
            err_console().print(f"[yellow]warning:[/] {shown(warning)}", highlight=False)
    if job_id is None:
        _print_redis_memory(address, used, limit, as_json)
        return
    summary = reader.summary(job_id, group_by=group_by)
    from evalq.client.archive_notes import archive_notes

    for note in archive_notes(reader, job_id, summary.status, live):
        # plain: status draws nothing with rich it can do without
        click.echo(visible(note), err=True)
    from evalq.client.judge_versions import version_change_note

    if (changed := version_change_note(reader, summary)) is not None:
        click.echo(visible(changed), err=True)
    if live:
        from evalq.client.workers_alive import status_note

        nobody = status_note(reader.job_reads, reader.settings, job_id, summary.status)
        if nobody is not None:  # a running job, and no worker alive to run it
            click.echo(visible(nobody), err=True)
    records = reader.batches(job_id) if summary.mode == "batch" else []
    bound = reader.batch_bound(job_id) if summary.mode == "batch" else None
    if as_json and summary.mode == "batch":
        data = json.loads(summary.model_dump_json())
        data["batches"] = [json.loads(r.model_dump_json()) for r in records]
        data["batches_max"] = bound
        echo_json(json.dumps(data))
        return
    emit(summary, as_json)
    if records:
        from evalq.client.output.terminal.tables import batch_notes, batches_table

        now = time.time()
        out_console().print(batches_table(records, now))
        if bound is not None:
            out_console().print(f"{len(records)} batches of at most {bound} for this job")
        for line in batch_notes(records, now):  # shown already (visible)
            out_console().print(line, markup=False, highlight=False)


def _print_redis_memory(address: str, used: int, limit: int, as_json: bool) -> None:
    if as_json:
        echo_json(json.dumps({"redis": address, "used_memory": used, "maxmemory": limit}))
        return
    bound = (
        f"{limit / 2**20:.0f} MiB" if limit else "none (set maxmemory: docs/operations/redis.md)"
    )
    out_console().print(
        visible(f"Redis {address}: {used / 2**20:.1f} MiB used, maxmemory {bound}"),
        highlight=False,
        markup=False,
    )


@click.command(epilog=examples("evalq wait JOB --fail-under 0.8"))
@job_id_argument
@json_option
@fail_under_option
@redis_option
def wait(job: str, as_json: bool, fail_under: float | None, redis_url: str | None) -> None:
    """Re-attach to a job: a progress bar until it finishes, pauses or is cancelled, then its
    summary and exit code, as `evalq run --wait` would have given (docs/concepts/jobs-rows-units.md: Exit codes)."""
    from evalq.client.cli.submit import ready_to_wait, wait_with_progress

    reader = make_reader(redis_url)
    job_id = job_of(reader, job)
    total = reader.rows_total(job_id)  # raises JobNotFound for a job that is not there
    with attached(job_id) as stop:
        ready_to_wait()
        err_console().print(shown(f"waiting for job {job_id} (Ctrl-C stops waiting, not the job)"))
        summary = wait_with_progress(reader, job_id, total, quiet=as_json, stop=stop)
    finish(summary, as_json, fail_under)


@click.command(
    epilog=examples("evalq jobs --since 30d --metric pointwise", 'evalq jobs "support v1"')
)
@click.argument("job_name", metavar="[NAME]", required=False)
@click.option("--metric", default=None, help="Only jobs of this metric.")
@click.option("--name", default=None, help="Only jobs whose --name holds this text.")
@click.option("--dataset", default=None, help="Only jobs whose dataset path holds this text.")
@click.option(
    "--since",
    default=None,
    metavar="WHEN",
    help="Only jobs created since: a date (2026-11-01), a local date and time, or an age "
    "(12h, 7d, 2w).",
)
@click.option(
    "--judge-version",
    default=None,
    metavar="VERSION",
    help="Only jobs with a verdict answered by this judge model version (as the API named "
    "it: `judge_setup.model_versions` in `evalq status --json`).",
)
@click.option("--limit", default=20, show_default=True, help="At most this many jobs.")
@click.option("--json", "as_json", is_flag=True)
@redis_option
def jobs(
    job_name: str | None,
    metric: str | None,
    name: str | None,
    dataset: str | None,
    since: str | None,
    judge_version: str | None,
    limit: int,
    as_json: bool,
    redis_url: str | None,
) -> None:
    """The history of jobs: live ones (running, paused) on top, then every ended job, from
    Redis and the archive, the newest first: name, dataset, when, metric, status, owner (who
    submitted it), rows and mean. With NAME, every job of that --name, the newest first, each
    beside what names it (NAME, NAME~1, ...)."""
    from evalq.client.jobs.listing import SinceError, parse_since
    from evalq.client.output.terminal.tables import jobs_table
    from evalq.worker.archive.filters import JobFilter

    try:
        start = None if since is None else parse_since(since)
    except SinceError as exc:
        raise click.BadParameter(str(exc), param_hint="--since") from None
    which = JobFilter(
        metric=metric,
        name=name,
        dataset=dataset,
        since=start,
        limit=limit,
        judge_version=judge_version,
    )
    if job_name is not None:
        which = replace(which, name=job_name, exact_name=True, limit=None)
    reader = make_reader(redis_url)
    refuse_a_missing_archive(reader)
    missing: list[str] = []

    def on_missing(why: str) -> None:
        missing.append(why)
        err_console().print(f"warning: {visible(why)}", markup=False, soft_wrap=True)

    summaries = reader.jobs(which, on_missing=on_missing)
    if job_name is not None:
        summaries = sorted(summaries, key=lambda s: (-(s.created_at or 0.0), s.job_id))[:limit]
    if as_json:
        echo_json(json.dumps([s.model_dump() for s in summaries]))
        return
    filtered = any(v is not None for v in (job_name, metric, name, dataset, since, judge_version))
    if summaries:
        out_console().print(jobs_table(summaries, handles=job_name is not None))
    else:  # an empty table reads like a failure to list; say what is known instead
        err_console().print(
            "no jobs match these filters"
            if filtered
            else "no jobs in this Redis or the archive (none submitted yet)"
        )
    err_console().print(visible(read_from(reader, empty=not missing)), markup=False, soft_wrap=True)


def refuse_a_missing_archive(reader: JobReader) -> None:
    """A SQLite archive whose folder is not there, in one line with the fix, before a listing
    without it could read as a history lost (evalq.worker.archive.place.missing_folder)."""
    from evalq.worker.archive.errors import ArchiveUnavailable
    from evalq.worker.archive.place import missing_folder

    archive = reader.archive
    if archive is not None and (why := missing_folder(archive.place)):
        raise ArchiveUnavailable(why)


def read_from(reader: JobReader, *, empty: bool) -> str:
    """Which Redis and archive a listing read, and (`empty`: when it could be read) whether
    the archive holds no job at all."""
    from evalq.worker.archive.filters import JobFilter

    redis = f"Redis at {reader.redis_address()}"
    archive = reader.archive
    if archive is None:
        return f"read from {redis}; the archive is off (EVALQ_ARCHIVE_URL=off)"
    said = f"read from {redis} and the archive at {archive.place.shown}"
    if empty and not archive.summaries(JobFilter(limit=1)):
        said += " (empty: no job has ended there yet)"
    return said


@click.command(
    epilog=examples(
        "evalq results JOB --out results.jsonl", "evalq results JOB --format csv --out results.csv"
    )
)
@job_id_argument
@click.option(
    "--format", "fmt", type=click.Choice(["jsonl", "csv"]), default="jsonl", show_default=True
)
@file_option("--out", None, "Write here instead of stdout.")
@redis_option
def results(job: str, fmt: str, out: Path | None, redis_url: str | None) -> None:
    """Write per-row results (also while the job runs). JSON Lines hold no character a terminal
    would obey raw (C1 controls, bidi overrides: JSON escapes, the same values); a CSV is the
    data as it is, its control characters shown escaped only on a terminal."""
    from evalq.client.output.exports.csv_tables import results_csv
    from evalq.client.output.exports.jsonl import results_jsonl

    reader = make_reader(redis_url)
    job_id = job_of(reader, job)
    rows = reader.results(job_id)
    texts = reader.judged_texts(job_id, rows)  # what the judge was shown, per row
    if fmt == "csv":
        text = results_csv(rows, texts)
    else:  # pydantic escapes C0 itself, not C1 or U+202E: the same values, spelled safe
        text = visible("".join(results_jsonl(rows, texts)), as_json=True)
    if out is None:
        if fmt == "csv" and sys.stdout.isatty():  # a CSV has no escapes of its own
            text = visible(text, multiline=True)
        click.echo(text, nl=False, color=True)  # color: click strips nothing from the data
    else:
        out.write_text(text, encoding="utf-8")
        err_console().print(f"wrote {len(rows)} rows to {visible(out)}", markup=False)


def write_html(path: Path, html: str) -> None:
    """Write an HTML report and say where, with its size."""
    path.write_text(html, encoding="utf-8")
    err_console().print(f"wrote {visible(path)} ({len(html) // 1024} KiB)", markup=False)


@click.command(epilog=examples("evalq report JOB --html report.html"))
@job_id_argument
@file_option("--html", "html_path", "Write the report here.", required=True)
@click.option(
    "--max-rows",
    default=500,
    show_default=True,
    help="Rows shown in full (all rows count in the summary).",
)
@group_by_option
@redis_option
def report(
    job: str, html_path: Path, max_rows: int, group_by: tuple[str, ...], redis_url: str | None
) -> None:
    """Write an HTML report: summary, per-tag chart, and per row what the judge saw and said."""
    from evalq.client.output.html.report import render_report
    from evalq.core.models import RowInput

    reader = make_reader(redis_url)
    job_id = job_of(reader, job)
    inputs: dict[object, RowInput] = {i: row for i, row in reader.inputs(job_id).items()}
    for candidate in reader.candidates(job_id):  # every cell its own texts
        inputs.update({(i, candidate): row for i, row in reader.inputs(job_id, candidate).items()})
    html = render_report(
        reader.summary(job_id, group_by=group_by),
        reader.results(job_id),
        inputs=inputs,
        max_rows=max_rows,
        data_roots=reader.data_roots(job_id),
        config=reader.config(job_id),
    )
    write_html(html_path, html)
