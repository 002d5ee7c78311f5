"""`evalq resume`, `evalq cancel` and `evalq turns`: steer a stored job."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING

import click

from evalq.client.cli import exit_codes
from evalq.client.cli.attach import JobEnded, attached, finish, note_job
from evalq.client.cli.common import (
    emit,
    err_console,
    force_option,
    job_id_argument,
    job_of,
    json_option,
    make_client,
    redis_option,
    wait_option,
)
from evalq.client.cli.help import examples
from evalq.client.output.terminal.visible import shown

if TYPE_CHECKING:
    from evalq.client.client import Client


class NothingToResume(JobEnded):
    """`evalq resume` on a finished job: one line says so, and nothing waits (exit 8)."""

    exit_code = exit_codes.NOTHING_TO_RESUME


@click.command(epilog=examples("evalq resume JOB --wait", "evalq resume JOB --max-cost-usd 20"))
@job_id_argument
@wait_option
@json_option
@click.option(
    "--max-cost-usd",
    type=float,
    default=None,
    help="A new spend cap in US dollars (the total, spend so far included).",
)
@force_option
@redis_option
def resume(
    job: str,
    wait: bool,
    as_json: bool,
    max_cost_usd: float | None,
    force: bool,
    redis_url: str | None,
) -> None:
    """Continue a paused, cancelled or interrupted job with the rows not yet scored (cached
    calls are free). A running job keeps its rows in flight; only rows that were lost are sent
    again. It says what it did in one line; a finished job has nothing to resume (exit 8).
    With --wait, the exit code says how it ended (docs/concepts/jobs-rows-units.md: Exit codes).
    Another user's job is refused without --force."""
    from evalq.client.cli.submit import ready_to_wait, wait_with_progress
    from evalq.client.control import resume_outcome

    client = make_client(redis_url)
    job_id = job_of(client, job)
    if not client.job_reads.exists(job_id):  # found in the archive only: its rows are gone
        raise _archived_only(client, job_id)
    acting = client.acting(force, "--force")
    outcome = resume_outcome(client.job_control, client.app, job_id, max_cost_usd, acting)
    if outcome.finished:
        raise NothingToResume(
            f"{outcome.describe()}; `evalq status {job_id}` shows it; "
            f"exit {NothingToResume.exit_code}"
        )
    said = outcome.describe()
    if not wait:
        note_job(job_id)
        said += f"; watch it with `evalq status {job_id}`"
        err_console().print(said, highlight=False, markup=False, soft_wrap=True)
        if as_json:
            emit(client.summary(job_id), as_json)
        return
    with attached(job_id) as stop:
        ready_to_wait()
        err_console().print(said, highlight=False, markup=False, soft_wrap=True)
        total = client.rows_total(job_id)
        summary = wait_with_progress(client, job_id, total, quiet=as_json, stop=stop)
    finish(summary, as_json, None)


def _archived_only(client: Client, job_id: str) -> Exception:
    """A job the archive has and Redis no longer does: finished, nothing to resume (exit 8);
    else (cancelled) its rows left Redis with it, so it can't go on (exit 2)."""
    from evalq.core.errors import EvalqError

    status = client.archived(job_id).status
    if status == "finished":
        return NothingToResume(
            f"job {job_id} is finished (in the archive): nothing to resume; "
            f"`evalq status {job_id}` shows it; exit {NothingToResume.exit_code}"
        )
    return EvalqError(
        f"job {job_id} was {status} and is only in the archive now: its rows are no longer "
        "in Redis, so it can't be resumed; submit its dataset again"
    )


@click.command(epilog=examples("evalq cancel JOB"))
@job_id_argument
@json_option
@force_option
@redis_option
def cancel(job: str, as_json: bool, force: bool, redis_url: str | None) -> None:
    """Stop a job cleanly: queued tasks skip it; rows already scored are kept. Another user's
    job is refused without --force."""
    client = make_client(redis_url)
    job_id = job_of(client, job)
    if not (outcome := client.try_cancel(job_id, force=force, flag="--force")).changed:
        err_console().print(f"job {job_id} already {outcome.before}: nothing to cancel")
    emit(client.summary(job_id), as_json)


@click.command(
    epilog=examples("evalq turns JOB", "evalq turns JOB --priority high --max-in-flight 50")
)
@job_id_argument
@click.option(
    "--priority",
    type=click.Choice(["high", "normal", "low"]),
    default=None,
    help="high takes turns ahead of normal jobs; low only takes turns others leave.",
)
@click.option(
    "--max-in-flight",
    type=click.IntRange(min=0),
    default=None,
    help="At most this many of its rows in the broker or running at once; 0 lifts the cap.",
)
@json_option
@force_option
@redis_option
def turns(
    job: str,
    priority: str | None,
    max_in_flight: int | None,
    as_json: bool,
    force: bool,
    redis_url: str | None,
) -> None:
    """Show or change a job's turns on shared workers (also while it runs). Changing another
    user's job is refused without --force."""
    from evalq.client.control import set_turns

    client = make_client(redis_url)
    job_id = job_of(client, job)
    state = set_turns(
        client.job_control,
        client.app,
        job_id,
        client.acting(force, "--force"),
        priority=priority,
        max_in_flight=max_in_flight,
    )
    if as_json:
        click.echo(json.dumps(asdict(state)))
        return
    cap = state.max_in_flight if state.max_in_flight is not None else "no cap"
    click.echo(
        f"job {job_id}: priority {state.priority}, max in flight {cap}, "
        f"{state.holding} rows in flight, {state.waiting} waiting"
    )


@click.command(
    "archive",
    epilog=examples(
        "evalq archive JOB",
        "evalq archive --all",
        "evalq archive --from sqlite:///old.sqlite --to postgresql://evalq@db/evalq",
    ),
)
@click.argument("jobs", nargs=-1, metavar="[JOB]...")
@click.option(
    "--all", "every", is_flag=True, help="Every ended job Redis still has (after an upgrade)."
)
@click.option(
    "--from", "from_url", metavar="URL", help="Copy every job of this archive (with --to)."
)
@click.option("--to", "to_url", metavar="URL", help="The archive --from's jobs are copied into.")
@redis_option
def archive(
    jobs: tuple[str, ...],
    every: bool,
    from_url: str | None,
    to_url: str | None,
    redis_url: str | None,
) -> None:
    """Write ended jobs to the archive now. Workers write each job they end; this is for jobs
    that ended before the archive existed, or to write one again (it replaces its record).
    Each JOB is an id, a unique prefix of one, or a --name. With --from and --to, copy every
    job of one archive into another instead (`evalq archive copy --from URL --to URL` says the
    same): a job already there is not copied twice."""
    from evalq.client.archive_jobs import archive_job, ended_in_redis
    from evalq.client.cli.common import make_reader

    if from_url is not None or to_url is not None:
        if from_url is None or to_url is None or jobs not in ((), ("copy",)) or every:
            raise click.UsageError(
                "a copy takes --from URL and --to URL, and no JOB or --all: "
                "evalq archive --from URL --to URL"
            )
        from evalq.client.archive_copy import copy_archive

        click.echo(copy_archive(from_url, to_url))
        return
    reader = make_reader(redis_url)
    ids = [job_of(reader, job) for job in jobs] + (ended_in_redis(reader) if every else [])
    if not ids:
        raise click.UsageError("name the jobs to archive, or give --all")
    for job_id in dict.fromkeys(ids):
        done = archive_job(reader, job_id)
        if done.status == "archived":
            line = f"job {job_id}: already in the archive at {done.where}, gone from Redis"
        else:
            line = f"job {job_id} ({done.status}, {done.rows} rows) archived to {done.where}"
        err_console().print(shown(line), highlight=False)
