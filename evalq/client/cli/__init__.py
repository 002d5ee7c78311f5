"""The `evalq` command line. Explicit flags win over EVALQ_* environment variables.

One module per command group (submit: run, rank; rubrics; control: resume, cancel, turns, archive; read: status, wait,
jobs, results, report; compare: compare, leaderboard; calibrate; serve: worker, metrics,
fake-gemini). Each command imports what it uses when it runs, so `evalq --help` loads no client, and
`evalq status` only the client's reads."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from evalq.client.cli import (
    calibrate,
    compare,
    control,
    exit_codes,
    read,
    rubrics,
    serve,
    submit,
)
from evalq.client.cli.attach import Detached, forget_job, noted_job
from evalq.client.cli.common import err_console, pause_collector, shown

__all__ = ["cli_entry", "main"]


@click.group()
@click.version_option(package_name="evalq")
def main() -> None:
    """Model-as-judge evaluations on Celery + Redis."""
    forget_job()


for command in (
    submit.run,
    submit.rank,
    rubrics.rubrics,
    control.resume,
    control.cancel,
    control.turns,
    control.archive,
    read.status,
    read.wait,
    read.jobs,
    read.results,
    serve.worker,
    serve.metrics,
    read.report,
    compare.compare,
    compare.leaderboard,
    calibrate.calibrate,
    serve.fake_gemini,
):
    main.add_command(command)

metrics = serve.metrics  # the command objects, by name, as before the split into modules


# Names other code imports from here, loaded when asked for (`job_options` loads the options
# models, `wait_with_progress` rich's progress bar).
_MOVED = {
    "job_options": "evalq.client.cli.metric_flags",
    "wait_with_progress": "evalq.client.cli.submit",
}


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        import importlib

        return getattr(importlib.import_module(_MOVED[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def cli_entry() -> None:
    """The `evalq` command: every exit code it ends with is one of evalq.client.cli.exit_codes
    (the README's table)."""
    pause_collector()  # until the command has loaded what it runs (common._Collector)
    try:
        main(standalone_mode=False)
    except click.exceptions.Abort:
        # Ctrl-C: once a job exists it runs on without this command, and says so.
        if (job_id := noted_job()) is not None:
            Detached(job_id).show()
        else:
            err_console().print("aborted")
        sys.exit(exit_codes.INTERRUPTED)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except Exception as exc:
        sys.exit(_failed(exc))


def _failed(exc: Exception) -> int:
    """Say what went wrong in one line (a traceback only for evalq's own bugs) and return the
    exit code. Imported only when something failed: `evalq --help` loads no models, no Redis
    client."""
    import redis

    from evalq.core.errors import EvalqError, RedisUnavailable

    if isinstance(exc, EvalqError):
        # Each line of the message whole (the terminal wraps it): a path or a command in it
        # copies as one piece, and a refusal's "one line" is one line.
        err_console().print(f"[red]error:[/] {shown(exc)}", soft_wrap=True)
        return exit_codes.REDIS_DOWN if isinstance(exc, RedisUnavailable) else exit_codes.ERROR
    if isinstance(exc, redis.RedisError):
        url = os.environ.get("EVALQ_REDIS_URL", "the default redis://127.0.0.1:6379/0")
        where = url.rsplit("@", 1)[-1]  # never print a password
        err_console().print(f"[red]error:[/] Redis ({shown(where)}) did not answer: {shown(exc)}")
        return exit_codes.REDIS_DOWN
    if isinstance(exc, OSError):  # a file that can't be read or written: the user's to fix
        err_console().print(f"[red]error:[/] {shown(exc)}")
        return exit_codes.ERROR
    import traceback

    traceback.print_exception(exc)
    err_console().print(
        f"[red]error:[/] unexpected {type(exc).__name__}: evalq's own bug, please report it "
        f"with the traceback above (exit {exit_codes.BUG})"
    )
    return exit_codes.BUG
