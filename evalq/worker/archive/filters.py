"""Which archived jobs a listing selects: built by the commands, turned into SQL by the reader
(JobFilter.where, which alone loads SQLAlchemy)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlalchemy as sa


@dataclass(frozen=True)
class JobFilter:
    """Which archived jobs to list: by metric, a name or dataset path holding a text (case
    does not matter), created since (epoch s), an id starting with a prefix, a judge model
    version one of its verdicts reported; the newest first, at most `limit`."""

    metric: str | None = None
    name: str | None = None
    dataset: str | None = None
    since: float | None = None
    limit: int | None = 20
    exact_name: bool = False  # the name, whole (resolving a job by its --name)
    id_prefix: str | None = None  # ids starting with it (resolving a job by an id prefix)
    judge_version: str | None = None  # a verdict answered by this model version

    def where(self, table: sa.Table) -> list[sa.ColumnElement[bool]]:
        import sqlalchemy as sa

        clauses: list[sa.ColumnElement[bool]] = []
        if self.metric:
            clauses.append(table.c.metric == self.metric)
        if self.name and self.exact_name:
            clauses.append(table.c.name == self.name)
        elif self.name:
            clauses.append(sa.func.lower(table.c.name).contains(self.name.lower(), autoescape=True))
        if self.dataset:
            clauses.append(
                sa.func.lower(table.c.dataset).contains(self.dataset.lower(), autoescape=True)
            )
        if self.since is not None:
            clauses.append(table.c.created_at >= self.since)
        if self.id_prefix:
            clauses.append(table.c.job_id.startswith(self.id_prefix, autoescape=True))
        if self.judge_version:
            from evalq.worker.archive.schema import verdicts

            answered = sa.select(verdicts.c.job_id).where(
                verdicts.c.model_version == self.judge_version
            )
            clauses.append(table.c.job_id.in_(answered))
        return clauses
