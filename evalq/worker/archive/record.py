"""A job as the archive keeps it: the texts evalq stored in Redis, gathered when the job ended
(evalq.worker.jobs.archiving.collect) and written in one transaction
(evalq.worker.archive.writer)."""

from __future__ import annotations

from dataclasses import dataclass, field

from evalq.core.models import JobConfig


@dataclass(frozen=True)
class ArchivedRow:
    """One line of the job (one cell of a multi-candidate job)."""

    key: str  # the line, or line/candidate (evalq.worker.store.row_key)
    line: int
    row_id: str
    candidate: str | None
    prompt: str
    input_json: str | None  # None: a line refused at submit (no row was stored)
    result_json: str | None  # None: never run (a cancelled job's rows left waiting)
    question_set: str | None = None
    verdicts: list[tuple[int, str]] = field(default_factory=list)  # unit -> Verdict JSON


@dataclass(frozen=True)
class JobRecord:
    config: JobConfig
    summary_json: str  # JobSummary JSON, as `evalq status` read it when the job ended
    status: str
    ended_at: float | None
    rows: list[ArchivedRow]
    question_sets: dict[str, str] = field(default_factory=dict)  # fingerprint -> questions JSON
    batches_json: str | None = None  # batch mode: the ledger's records, a JSON list
    batch_bound: int | None = None
    written_by: str = ""
