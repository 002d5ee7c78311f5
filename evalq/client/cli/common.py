"""What the commands share: the consoles, --redis-url, a job id argument, the client (or only
its reads), and printing a summary. Light on purpose: every command imports what it uses when
it runs, so `evalq --help` loads no client."""

from __future__ import annotations

import functools
import gc
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from evalq.client.output.terminal.visible import visible

if TYPE_CHECKING:
    from rich.console import Console

    from evalq.client.client import Client
    from evalq.client.reads import JobReader


@functools.cache
def err_console() -> Console:
    """Standard error's rich console, made when first used: `evalq status` prints its summary
    without rich and loads it only for a warning."""
    from evalq.client.output.terminal.console import TerminalConsole

    return TerminalConsole(stderr=True)


@functools.cache
def out_console() -> Console:
    """Standard output's rich console. Both consoles send no control character of the
    user's or the judge's text (evalq.client.output.terminal.console), as every printer shows
    that text through evalq.client.output.terminal.visible first."""
    from evalq.client.output.terminal.console import TerminalConsole

    return TerminalConsole()


def _archive_url(_ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    """--archive-url becomes EVALQ_ARCHIVE_URL before any settings are built from it."""
    if value:
        os.environ["EVALQ_ARCHIVE_URL"] = value
        from evalq.worker.settings import get_settings

        get_settings.cache_clear()


archive_option = click.option(
    "--archive-url",
    default=None,
    expose_value=False,
    callback=_archive_url,
    metavar="URL",
    help="The archive to read (default: EVALQ_ARCHIVE_URL, else SQLite in "
    "~/.local/share/evalq): sqlite:///PATH or postgresql://USER@HOST/DB.",
)


def redis_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """--redis-url, and --archive-url beside it: every command that reads Redis falls back
    to the archive for a job Redis no longer has."""
    with_redis = click.option(
        "--redis-url", envvar=None, default=None, help="Redis URL (default: EVALQ_REDIS_URL)."
    )(command)
    return archive_option(with_redis)


force_option = click.option(
    "--force",
    is_flag=True,
    help="Act on the job even if another user submitted it (its owner in `evalq status`).",
)
json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print the summary as one JSON object."
)
wait_option = click.option(
    "--wait", is_flag=True, help="Show progress and print the summary when done."
)


def file_option(
    flag: str, dest: str | None, help: str, *, required: bool = False
) -> Callable[[Any], Any]:
    """A flag naming a file (not a folder) to read or write."""
    names = [flag, dest] if dest else [flag]
    return click.option(
        *names, type=click.Path(dir_okay=False, path_type=Path), required=required, help=help
    )


def echo_json(text: str) -> None:
    """A JSON document (or JSON Lines) on standard output, exact: the characters a terminal
    would obey that JSON may hold raw (C1 controls, bidi overrides: pydantic writes them as
    they are) are written as JSON escapes (\\u009b, \\u202e), the same values."""
    click.echo(visible(text, as_json=True))


def apply_overrides(redis_url: str | None) -> None:
    """Flags become environment before any worker module builds its settings or the Celery app."""
    if redis_url:
        os.environ["EVALQ_REDIS_URL"] = redis_url
        from evalq.worker.settings import get_settings

        get_settings.cache_clear()


class _Collector:
    """The garbage collector off while a command starts (cli_entry), on again once it has loaded
    what it runs (make_client, make_reader). Start-up makes only what lives as long as the
    process (modules, classes, pydantic schemas); each collection during it walks all of that
    again: pausing took `evalq status` from 0.25 s to 0.19 s of CPU. Frozen on resuming, so
    later collections in a long `wait` skip it too. Only a pause cli_entry made is resumed: a
    test or a program calling these functions keeps its collector as it set it."""

    paused = False

    @classmethod
    def pause(cls) -> None:
        if gc.isenabled():
            gc.disable()
            cls.paused = True

    @classmethod
    def resume(cls) -> None:
        if cls.paused:
            cls.paused = False
            gc.freeze()
            gc.enable()


pause_collector, resume_collector = _Collector.pause, _Collector.resume


def make_client(redis_url: str | None) -> Client:
    apply_overrides(redis_url)
    from evalq.client.client import Client

    client = Client()
    resume_collector()
    return client


def make_reader(redis_url: str | None) -> JobReader:
    """The client's reads alone: no Celery app, dataset loader or google-genai."""
    apply_overrides(redis_url)
    from evalq.client.reads import JobReader

    reader = JobReader()
    resume_collector()
    return reader


def _job_ref(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """A job as given: its id, a prefix of its id or its --name, found by the command once it
    has its Redis and archive (job_of). Only an empty one is refused here."""
    if value is not None and not value.strip():
        raise click.BadParameter(
            "give a job: its id, a prefix of its id (4 hex digits or more) or its --name"
        )
    return value


job_id_argument = click.argument("job", metavar="JOB", callback=_job_ref)
optional_job_argument = click.argument("job", metavar="[JOB]", required=False, callback=_job_ref)


def job_of(reader: JobReader, ref: str) -> str:
    """The id of the job `ref` names (evalq.client.jobs.lookup): a full id as given, with no
    lookup; a unique id prefix or a --name found in Redis and the archive. A ref that fits
    several jobs, or none, is refused (exit 2) saying which, or where it looked."""
    from evalq.client.jobs.lookup import resolve

    return resolve(reader, ref)


def emit(summary: Any, as_json: bool, brief: bool = False) -> None:
    """A job's summary: JSON, one line saying where to watch it, or the summary table."""
    if as_json:
        echo_json(summary.model_dump_json())
        return
    if brief:
        out_console().print(
            f"job {summary.job_id} enqueued: watch it with `evalq status {summary.job_id}`"
        )
        return
    from evalq.client.output.terminal.summary import print_summary

    print_summary(summary)
