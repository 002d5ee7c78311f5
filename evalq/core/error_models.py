"""What went wrong in a job, as its summary says it (JobSummary.task_errors and row_errors): a
contract between processes like the rest of evalq.core.models, which re-exports these; kept
apart for size."""

from __future__ import annotations

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
