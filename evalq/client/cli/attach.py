"""Being attached to a running job (`run --wait`, `resume --wait`, `evalq wait`): what Ctrl-C
means there, and the exit code a CI run reads at the end. The job lives on the workers, so
leaving the wait must never look like stopping the job."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any

import click

from evalq.client.cli import exit_codes
from evalq.client.cli.common import emit, err_console
from evalq.client.output.terminal.visible import shown

# The job this command submitted or waits on, once there is one: a Ctrl-C anywhere after
# that point (not only inside the wait) says the job runs on. One command per process.
_job: dict[str, str] = {}


def note_job(job_id: str) -> None:
    _job["id"] = job_id


def forget_job() -> None:
    _job.clear()


def noted_job() -> str | None:
    return _job.get("id")


@contextmanager
def ctrl_c_flag() -> Iterator[threading.Event | None]:
    """While waiting, Ctrl-C sets a flag that the wait reads at its pauses (watch.wait's
    `stop`), instead of raising KeyboardInterrupt wherever the main thread happens to be. Raised
    just after a `with` took a lock (rich's console, while its refresh thread waits on the
    live display's lock), it can leave the lock held and the command hung for good, printing
    nothing. Off the main thread (a CliRunner in a thread) no handler can be set: None, and
    Ctrl-C is Python's own KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield None
        return
    stop = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda _signum, _frame: stop.set())
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)


@contextmanager
def attached(job_id: str) -> Iterator[threading.Event | None]:
    """What a command that waits on a job enters before it says anything about the job: the
    job noted (a Ctrl-C outside the wait still says it runs on) and Ctrl-C made the flag the
    wait reads, which it yields. A user presses Ctrl-C once a line names the job; from then on
    a SIGINT can only set the flag, never raise inside a print or an import."""
    note_job(job_id)
    with ctrl_c_flag() as stop:
        yield stop


class Detached(click.ClickException):
    """Ctrl-C while waiting: only this command stops. Exit 130, as a shell expects of SIGINT."""

    exit_code = exit_codes.INTERRUPTED

    def __init__(self, job_id: str) -> None:
        super().__init__(f"stopped waiting for job {job_id}")
        self.job_id = job_id

    def show(self, file: IO[Any] | None = None) -> None:
        job = self.job_id
        err_console().print(
            f"stopped waiting; job {job} keeps running on the workers.\n"
            f"  re-attach: evalq wait {job}\n"
            f"  stop it:   evalq cancel {job}",
            highlight=False,
        )


class BelowThreshold(click.ClickException):
    """--fail-under: a figure under the threshold (or with nothing scored). Exit 1."""

    exit_code = exit_codes.BELOW_THRESHOLD

    def __init__(self, job_id: str, lines: list[str]) -> None:
        super().__init__("; ".join(lines))
        self.job_id, self.lines = job_id, lines

    def show(self, file: IO[Any] | None = None) -> None:
        for line in self.lines:
            err_console().print(
                f"[red]fail-under:[/] job {self.job_id} {shown(line)}", highlight=False
            )


fail_under_option = click.option(
    "--fail-under",
    type=float,
    default=None,
    metavar="X",
    help="Exit 1 when the finished job's mean is under X (each candidate's in a --candidates "
    "job, and each group's when grouped); a figure with no scored rows fails too. "
    "`evalq run`: with --wait.",
)


class JobEnded(click.ClickException):
    """A job waited on that ended without a result a pipeline can use. Each kind has its exit
    code (a subclass below), and the last line printed says why: one line, never folded, so
    `tail -n 1` of stderr reads it whole."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line

    def show(self, file: IO[Any] | None = None) -> None:
        err_console().print(f"[red]{shown(self.line)}[/]", highlight=False, soft_wrap=True)


class NoScoredRow(JobEnded):
    exit_code = exit_codes.NO_SCORED_ROW


class Cancelled(JobEnded):
    exit_code = exit_codes.CANCELLED


class Paused(JobEnded):
    exit_code = exit_codes.PAUSED


def _reasons(counts: dict[str, int]) -> str:
    return ", ".join(f"{reason} {n}" for reason, n in sorted(counts.items(), key=lambda i: -i[1]))


def ended_without_result(summary: Any) -> JobEnded | None:
    """How a job waited on ended, when that leaves nothing to use: cancelled, paused, or with
    no scored row (every row failed); None when it finished with scored rows."""
    job = summary.job_id
    done = f"{summary.rows_done} of {summary.rows_total} rows done"
    scored = summary.rows_scored + summary.rows_partial
    if summary.status == "cancelled":
        return Cancelled(
            f"job {job} was cancelled: {done}, {scored} scored "
            f"(`evalq results {job}` has them); exit {Cancelled.exit_code}"
        )
    if summary.status == "paused":
        why = summary.pause_reason or "no reason recorded"
        return Paused(
            f"job {job} is paused, {done}: {why}; `evalq resume {job}` continues it; "
            f"exit {Paused.exit_code}"
        )
    if scored == 0:
        reasons = _reasons(summary.rows_failed_by_reason)
        return NoScoredRow(
            f"job {job} ended with no scored row: {summary.rows_failed} of "
            f"{summary.rows_total} rows failed"
            + (f" ({reasons})" if reasons else "")
            + f"; `evalq results {job}` has each row's error; exit {NoScoredRow.exit_code}"
        )
    return None


def finish(summary: Any, as_json: bool, fail_under: float | None, said: Sequence[str] = ()) -> None:
    """Print the summary of a job waited on, then the exit code a CI run reads: how the job
    ended when that left nothing to use, else --fail-under (if given). `said`: warnings the
    command printed already (as it submitted the job), not printed again (JSON keeps them)."""
    if said and not as_json:
        kept = [warning for warning in summary.warnings if warning not in set(said)]
        emit(summary.model_copy(update={"warnings": kept}), as_json)
    else:
        emit(summary, as_json)
    if (ended := ended_without_result(summary)) is not None:
        raise ended
    if fail_under is None:
        return
    from evalq.client.fail_under import under

    if lines := under(summary, fail_under):
        raise BelowThreshold(summary.job_id, lines)
