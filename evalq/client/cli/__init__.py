"""The `evalq` command line, one module per command group. Explicit flags win over EVALQ_*
environment variables; each command imports what it uses when it runs, so `evalq --help` loads
no client, and `evalq status` only the client's reads."""

from __future__ import annotations

import io
import os
import sys
from typing import IO, Any, cast

import click

from evalq.client.cli import (
    calibrate,
    compare,
    control,
    drift,
    exit_codes,
    read,
    regrade,
    rubrics,
    serve,
    submit,
)
from evalq.client.cli.attach import Detached, forget_job, noted_job
from evalq.client.cli.common import err_console, pause_collector
from evalq.client.cli.help import ReaderGone, TaskGroup, examples
from evalq.client.output.terminal.visible import shown, visible

__all__ = ["cli_entry", "main"]


@click.group(
    cls=TaskGroup,
    epilog=examples(
        "evalq worker",
        "evalq run pointwise answers.jsonl --template fluency --wait",
    ),
)
@click.version_option(package_name="evalq")
def main() -> None:
    """Model-as-judge evaluations on Celery + Redis."""
    forget_job()


for command in (
    submit.run,
    submit.rank,
    regrade.regrade,
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
    drift.drift,
    calibrate.calibrate,
    serve.fake_gemini,
):
    main.add_command(command)


def cli_entry() -> None:
    """The `evalq` command: every exit code it ends with is one of evalq.client.cli.exit_codes
    (the manual's table, docs/concepts/jobs-rows-units.md)."""
    pause_collector()  # until the command has loaded what it runs (common._Collector)
    _guard_stray_output()
    try:
        main(standalone_mode=False)
    except SystemExit:
        # click's own answer to a closed pipe outside a command (`evalq --help | head`): exit 1
        # with standard output swapped for one that stays quiet.
        if type(sys.stdout).__name__.endswith("PacifyFlushWrapper"):  # click.utils, private
            sys.exit(_reader_gone())
        raise
    except click.exceptions.Abort:
        # Ctrl-C: once a job exists it runs on without this command, and says so.
        if (job_id := noted_job()) is not None:
            Detached(job_id).show()
        else:
            err_console().print("aborted")
        sys.exit(exit_codes.INTERRUPTED)
    except click.ClickException as exc:
        # click's own refusals quote what they refuse (a value, a file name, an option).
        exc.show(file=cast(IO[Any], _VisibleStderr()))
        sys.exit(exc.exit_code)
    except (BrokenPipeError, ReaderGone):
        sys.exit(_reader_gone())
    except Exception as exc:
        sys.exit(_failed(exc))


def _reader_gone() -> int:
    """Standard output's reader closed the pipe (`evalq status X | head`): what it read was
    what it wanted, so the command ends well (exit 0), with nothing more written there,
    Python's own flush at exit included."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        pass  # no file descriptor (a test's captured stream): nothing left to flush into
    return exit_codes.OK


class _VisibleStderr(io.TextIOBase):
    """Standard error for click's own messages (a usage error, a refused value): written
    through evalq.client.output.terminal.visible, line breaks kept."""

    def write(self, s: str) -> int:
        sys.stderr.write(visible(s, multiline=True))
        return len(s)

    def flush(self) -> None:
        sys.stderr.flush()


_guarded: list[bool] = []  # the warnings and logging hooks below, once per process


def _guard_stray_output() -> None:
    """What reaches standard error without evalq's printers, a Python warning or a log record
    a library emits with no handler set up (logging's last resort), is shown through
    evalq.client.output.terminal.visible as well: a message can quote a row's text."""
    import logging
    import warnings

    if _guarded:
        return
    _guarded.append(True)
    formatwarning = warnings.formatwarning

    def visible_warning(*args: Any, **kwargs: Any) -> str:
        return visible(formatwarning(*args, **kwargs), multiline=True)

    class VisibleFormatter(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            return visible(super().format(record), multiline=True)

    warnings.formatwarning = visible_warning
    if logging.lastResort is not None:
        logging.lastResort.setFormatter(VisibleFormatter())


def _failed(exc: Exception) -> int:
    """Say what went wrong in one line (a traceback only for evalq's own bugs) and return the
    exit code. Imported only when something failed: `evalq --help` loads no models, no Redis
    client."""
    from pydantic import ValidationError
    from pydantic_settings import SettingsError as NotParsed

    from evalq.core.errors import EvalqError, RedisUnavailable
    from evalq.worker.jobs.reads import REDIS_ERROR
    from evalq.worker.settings import Settings, settings_problem, unparsed_problem

    if isinstance(exc, EvalqError):
        # Each line of the message whole (the terminal wraps it): a path or a command in it
        # copies as one piece, and a refusal's "one line" is one line.
        err_console().print(f"[red]error:[/] {shown(exc, multiline=True)}", soft_wrap=True)
        return exit_codes.REDIS_DOWN if isinstance(exc, RedisUnavailable) else exit_codes.ERROR
    if isinstance(exc, ValidationError) and exc.title == Settings.__name__:
        # Settings built without load_settings: still a setting's value, the user's to fix.
        err_console().print(f"[red]error:[/] {shown(settings_problem(exc))}", soft_wrap=True)
        return exit_codes.ERROR
    if isinstance(exc, NotParsed):  # a JSON setting that is not JSON, read the same way
        err_console().print(f"[red]error:[/] {shown(unparsed_problem(exc))}", soft_wrap=True)
        return exit_codes.ERROR
    if isinstance(exc, REDIS_ERROR):
        url = os.environ.get("EVALQ_REDIS_URL", "the default redis://127.0.0.1:6379/0")
        where = url.rsplit("@", 1)[-1]  # never print a password
        err_console().print(f"[red]error:[/] Redis ({shown(where)}) did not answer: {shown(exc)}")
        return exit_codes.REDIS_DOWN
    if isinstance(exc, OSError):  # a file that can't be read or written: the user's to fix
        err_console().print(f"[red]error:[/] {shown(exc)}")
        return exit_codes.ERROR
    import traceback

    # The traceback's messages may quote a row's text too.
    sys.stderr.write(visible("".join(traceback.format_exception(exc)), multiline=True))
    err_console().print(
        f"[red]error:[/] unexpected {type(exc).__name__}: evalq's own bug, please report it "
        f"with the traceback above (exit {exit_codes.BUG})"
    )
    return exit_codes.BUG
