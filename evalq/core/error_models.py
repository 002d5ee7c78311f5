"""What went wrong in a job, as its summary says it (JobSummary.task_errors and row_errors): a
contract between processes like the rest of evalq.core.models, which re-exports these; kept
apart for size."""

from __future__ import annotations

import time

from pydantic import BaseModel, ConfigDict, Field


class Model(BaseModel):
    model_config = ConfigDict(defer_build=True)


class TaskErrors(Model):
    """Exceptions that escaped a task's code (a bug, an SDK's unexpected error): how many, the
    last one ("Type: message"), the task it escaped from and when (epoch s). Each was retried;
    one that persisted failed its row (online) or paused the job (batch mode)."""

    count: int
    last_error: str | None = None
    task: str | None = None
    at: float | None = None


class FailoverNote(Model):
    """A Redis failover (or restart) the job lived through, which may have lost writes: when a
    worker first found Redis changed (epoch s), the calls whose lost spend the workers added
    back from their own tallies, and the calls whose spend may still be missing (a write cut
    off with its connection, whether it landed unknown; a worker that stopped before it saw
    the failover could not say what it lost)."""

    at: float
    calls_restored: int = 0
    calls_unconfirmed: int = 0

    def says(self) -> str:
        """One line for `evalq status`: what the job's figures may miss."""
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.at))
        said = f"lived through a Redis failover at {when}"
        if self.calls_restored:
            said += f"; {self.calls_restored} calls' lost spend restored from the workers' tallies"
        if self.calls_unconfirmed:
            return (
                f"{said}: up to {self.calls_unconfirmed} calls made before it may be missing "
                "from the cost"
            )
        return f"{said}: no call is known to be missing from the cost"


class RowErrorCount(Model):
    """One cause of failed rows (the row's error, without what names the row) and how many
    failed rows (cells, in a multi-candidate job) it is."""

    error: str
    rows: int


class RowErrors(Model):
    """The most common causes of the job's failed rows (evalq.core.row_errors): at most
    row_errors.TOP of them, most rows first, and the failed rows whose cause is none of those
    (`other_rows`, over `other_errors` distinct causes)."""

    top: list[RowErrorCount] = Field(default_factory=list)
    other_rows: int = 0
    other_errors: int = 0
