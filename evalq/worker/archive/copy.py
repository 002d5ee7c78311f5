"""Copying every job of one archive into another (a SQLite history moved to a team's
PostgreSQL): each job in its own transaction on the target, so a copy killed half way leaves
whole jobs only, and a rerun copies the rest without doubling any."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from evalq.worker.archive import schema
from evalq.worker.archive.engine import (
    HEAD,
    _engine,
    alembic_config,
    archive_errors,
    open_archive,
    schema_revision,
    sqlite_path,
    writing,
)
from evalq.worker.archive.errors import ArchiveSchemaTooNew, ArchiveUnavailable
from evalq.worker.archive.place import ArchivePlace
from evalq.worker.archive.writer import replace_job


class ArchiveSchemaOld(ArchiveUnavailable):
    """A source archive at an older revision: copied as it is, its jobs would miss columns."""


@dataclass(frozen=True)
class CopyPlan:
    """The source's jobs the target lacks (or holds an older write of), oldest first, and how
    many it already has as written in the source."""

    to_copy: list[str]
    already: int


def open_source(place: ArchivePlace) -> Engine:
    """The source's engine, its schema checked but never changed: a copy reads it only."""
    if place.backend == "sqlite" and not sqlite_path(place.url).is_file():
        raise ArchiveUnavailable(
            f"no archive at {place.shown}: the file does not exist; check --from"
        )
    engine = _engine(place.url)
    with archive_errors(place):
        revision = schema_revision(engine)
    if revision is None:
        raise ArchiveUnavailable(
            f"no archive at {place.shown}: it has no evalq tables; check --from"
        )
    if revision == HEAD:
        return engine
    from alembic.script import ScriptDirectory

    known = {r.revision for r in ScriptDirectory.from_config(alembic_config()).walk_revisions()}
    if revision in known:
        raise ArchiveSchemaOld(
            f"the archive at {place.shown} has schema revision {revision}, older than this "
            f"evalq's {HEAD}: upgrade it first: `evalq jobs --archive-url URL` (URL as given "
            "to --from; the first command that opens an archive upgrades it), then copy again"
        )
    raise ArchiveSchemaTooNew(
        f"the archive at {place.shown} has schema revision {revision}, newer than this evalq "
        f"knows (its newest is {HEAD}): copy it with the evalq that wrote it, or upgrade evalq"
    )


def open_target(place: ArchivePlace) -> Engine:
    """The target's engine, created or upgraded to the newest revision as any write does."""
    with archive_errors(place):
        return open_archive(place)


def plan_copy(
    source_place: ArchivePlace, source: Engine, target_place: ArchivePlace, target: Engine
) -> CopyPlan:
    """A job the target holds from the same write (or a later one) is left as it is."""
    ordered = sa.select(schema.jobs.c.job_id, schema.jobs.c.archived_at).order_by(
        schema.jobs.c.created_at, schema.jobs.c.job_id
    )
    with archive_errors(source_place), source.connect() as connection:
        found = connection.execute(ordered).all()
    listed = sa.select(schema.jobs.c.job_id, schema.jobs.c.archived_at)
    with archive_errors(target_place), target.connect() as connection:
        held = {job_id: at for job_id, at in connection.execute(listed)}
    to_copy = [job_id for job_id, at in found if job_id not in held or held[job_id] < at]
    return CopyPlan(to_copy=to_copy, already=len(found) - len(to_copy))


@dataclass(frozen=True)
class _Job:
    """One job's rows of every table, as the source holds them."""

    job: dict[str, Any]
    rows: list[dict[str, Any]]
    verdicts: list[dict[str, Any]]
    question_sets: dict[str, str]


def read_job(source: Engine, job_id: str) -> _Job:
    with source.connect() as connection:
        job = _one_job(connection, job_id)
        rows = _mappings(connection, schema.rows, job_id)
        verdicts = _mappings(connection, schema.verdicts, job_id)
        prints = sorted({r["question_set"] for r in rows if r["question_set"] is not None})
        sets = connection.execute(
            sa.select(schema.question_sets.c.fingerprint, schema.question_sets.c.questions).where(
                schema.question_sets.c.fingerprint.in_(prints)
            )
        )
        return _Job(job, rows, verdicts, {fingerprint: text for fingerprint, text in sets})


def write_job(target: Engine, copied: _Job) -> None:
    """In one target transaction, replacing whatever the target held of the job."""
    with writing(target) as connection:
        replace_job(connection, copied.job, copied.question_sets, copied.rows, copied.verdicts)


def copy_all(
    source_place: ArchivePlace,
    target_place: ArchivePlace,
    on_plan: Callable[[CopyPlan], None] = lambda _plan: None,
    on_job: Callable[[str], None] = lambda _job_id: None,
) -> CopyPlan:
    """Copy what the target lacks; `on_plan` hears the plan, `on_job` each job once copied."""
    if source_place.identity == target_place.identity:
        raise ArchiveUnavailable(
            f"--from and --to are one archive ({source_place.shown}): name two different ones"
        )
    source = open_source(source_place)
    target = open_target(target_place)
    plan = plan_copy(source_place, source, target_place, target)
    on_plan(plan)
    for job_id in plan.to_copy:
        with archive_errors(source_place):
            copied = read_job(source, job_id)
        with archive_errors(target_place):
            write_job(target, copied)
        on_job(job_id)
    return plan


def _one_job(connection: sa.Connection, job_id: str) -> dict[str, Any]:
    found = connection.execute(sa.select(schema.jobs).where(schema.jobs.c.job_id == job_id))
    return dict(found.mappings().one())


def _mappings(connection: sa.Connection, table: sa.Table, job_id: str) -> list[dict[str, Any]]:
    found = connection.execute(sa.select(table).where(table.c.job_id == job_id))
    return [dict(row) for row in found.mappings()]
