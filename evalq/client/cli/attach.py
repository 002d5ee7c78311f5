"""Being attached to a running job (`run --wait`, `resume --wait`, `evalq wait`): what Ctrl-C
means there, and the exit code a CI run reads at the end (--fail-under). The job lives on the
workers, so leaving the wait must never look like stopping the job."""

from __future__ import annotations

from typing import IO, Any

import click

from evalq.client.cli.common import emit, err_console, shown

# The job this command submitted or waits on, once there is one: a Ctrl-C anywhere after
# that point (not only inside the wait) says the job runs on. One command per process.
_job: dict[str, str] = {}


def note_job(job_id: str) -> None:
    _job["id"] = job_id


def forget_job() -> None:
    _job.clear()


def noted_job() -> str | None:
    return _job.get("id")


class Detached(click.ClickException):
    """Ctrl-C while waiting: only this command stops. Exit 130, as a shell expects of SIGINT."""

    exit_code = 130

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

    exit_code = 1

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


def finish(summary: Any, as_json: bool, fail_under: float | None) -> None:
    """Print the summary of a job waited on, then hold it to --fail-under (if given)."""
    emit(summary, as_json)
    if fail_under is None:
        return
    from evalq.client.fail_under import under

    if lines := under(summary, fail_under):
        raise BelowThreshold(summary.job_id, lines)
