"""`evalq archive --from --to` from a SQLite archive into the real PostgreSQL server: every
table's rows arrive as the source holds them and a second copy doubles nothing, a copy killed
half way leaves whole jobs that a rerun completes, and an older source schema is refused."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine, make_url

from devtools.local import libpq_url, wait_for
from evalq.core.counters import JobCounters
from evalq.core.models import Question, RowInput, RowResult, Verdict
from evalq.core.summary import build_summary
from evalq.worker.archive import schema
from evalq.worker.archive.archive import Archive
from evalq.worker.archive.engine import HEAD, _engine, alembic_config, schema_revision, writing
from evalq.worker.archive.place import archive_place
from evalq.worker.archive.record import ArchivedRow, JobRecord
from evalq.worker.archive.writer import job_lock_key
from tests.support.cli import TIMEOUT_S, bare_env, one_line_refusal, run_evalq, start_evalq
from tests.support.job_configs import job_config

pytestmark = pytest.mark.integration

PASSWORD = "s3cret-pw"  # the server trusts the connection: a password it never checks
TABLES = (schema.jobs, schema.question_sets, schema.rows, schema.verdicts)


def job_to_copy(job_id: str, created_at: float, rows: int = 2) -> JobRecord:
    """A finished job with verdicts and a question set shared by every job."""
    config = job_config("gecko-image", job_id=job_id, rows_total=rows, created_at=created_at)
    results = [
        RowResult(
            id=f"r{line}",
            line=line,
            prompt=f"prompt {line}",
            status="scored",
            score=line / rows,
            question_set="c" * 16,
        )
        for line in range(1, rows + 1)
    ]
    counters = JobCounters(status="finished", rows_done=rows, rows_scored=rows)
    summary = build_summary(config, counters, {}, results, created_at + 5)
    verdict = Verdict(index=0, status="ok", answer="yes", result=1, model_version="v-1")
    question = Question(question="Is there a cat?", expected="yes", tag="object")
    return JobRecord(
        config=config,
        summary_json=summary.model_dump_json(),
        status="finished",
        ended_at=created_at + 5,
        rows=[
            ArchivedRow(
                key=str(r.line),
                line=r.line,
                row_id=r.id,
                candidate=None,
                prompt=r.prompt,
                input_json=RowInput(id=r.id, line=r.line, prompt=r.prompt).model_dump_json(),
                result_json=r.model_dump_json(),
                question_set=r.question_set,
                verdicts=[(0, verdict.model_dump_json()), (1, verdict.model_dump_json())],
            )
            for r in results
        ],
        question_sets={"c" * 16: "[" + question.model_dump_json() + "]"},
        written_by="test",
    )


def sqlite_history(folder: Path, jobs: int) -> tuple[str, Archive]:
    url = f"sqlite:///{folder / 'history.sqlite'}"
    archive = Archive.at(url)
    assert archive is not None
    for n in range(jobs):
        archive.write(job_to_copy(f"c0c0c0c0{n:04d}", 1_700_000_000.0 + n, rows=1 + n % 3))
    return url, archive


def url_with_a_password(postgres_url: str) -> str:
    """The test database's URL as a person gives it, with a password in it."""
    url = make_url(postgres_url).set(drivername="postgresql", password=PASSWORD)
    return url.render_as_string(hide_password=False)


def contents(engine: Engine) -> dict[str, list[tuple[object, ...]]]:
    with engine.connect() as connection:
        return {
            table.name: sorted(tuple(row) for row in connection.execute(sa.select(table)).all())
            for table in TABLES
        }


def target_engine(url: str) -> Engine:
    place = archive_place(url)
    assert place is not None
    return _engine(place.url)


def copy(source: str, target: str, *words: str) -> str:
    done = run_evalq(bare_env(), "archive", *words, "--from", source, "--to", target)
    assert done.returncode == 0, done.stdout + done.stderr
    assert PASSWORD not in done.stdout + done.stderr
    return done.stdout.strip()


def test_a_sqlite_history_arrives_whole_in_postgres_and_once(
    postgres_url: str, tmp_path: Path
) -> None:
    source_url, source = sqlite_history(tmp_path, 4)
    target_url = url_with_a_password(postgres_url)
    shown = f"postgresql://postgres:***@{make_url(postgres_url).host}"
    said = copy(source_url, target_url)
    assert said.startswith(f"copied 4 jobs (0 already there) from {source_url} to {shown}")
    expected = contents(source.engine)
    assert contents(target_engine(target_url)) == expected
    assert [len(expected[t.name]) for t in TABLES] == [4, 1, 7, 14]

    again = copy(source_url, target_url, "copy")  # the other spelling
    assert again.startswith("copied 0 jobs (4 already there)")
    assert contents(target_engine(target_url)) == expected

    source.write(job_to_copy("c0c0c0c00001", 1_700_000_001.0, rows=3))  # written again
    assert copy(source_url, target_url).startswith("copied 1 job (3 already there)")
    assert contents(target_engine(target_url)) == contents(source.engine)


def test_a_copy_killed_half_way_leaves_whole_jobs_and_a_rerun_finishes(
    postgres_url: str, tmp_path: Path
) -> None:
    source_url, source = sqlite_history(tmp_path, 6)
    target = Archive.at(postgres_url)
    assert target is not None
    target.open()
    with psycopg.connect(libpq_url(postgres_url), autocommit=True) as blocker:
        # The copy writes jobs oldest first and each writer takes its job's lock: holding the
        # fourth job's lock stops the copy there, three jobs in.
        blocker.execute("SELECT pg_advisory_lock(%s)", (job_lock_key("c0c0c0c00003"),))
        copying = start_evalq(bare_env(), "archive", "--from", source_url, "--to", postgres_url)
        try:

            def stopped_at_the_fourth() -> bool:
                jobs = count(target.engine, schema.jobs)
                waiting = blocker.execute(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = "
                    "(SELECT oid FROM pg_database WHERE datname = current_database()) AND NOT granted"
                ).fetchone()
                assert copying.poll() is None, copying.communicate()
                return jobs == 3 and waiting is not None and waiting[0] == 1

            wait_for(stopped_at_the_fourth, TIMEOUT_S, "the copy waiting on the fourth job")
            os.kill(copying.pid, signal.SIGKILL)
        finally:
            copying.kill()
            copying.communicate()
    assert copying.returncode == -signal.SIGKILL
    left = contents(target.engine)
    assert [row[0] for row in left[schema.jobs.name]] == [f"c0c0c0c0{n:04d}" for n in range(3)]
    rows_of = {job_id for job_id, *_ in left[schema.rows.name]}
    assert rows_of == {f"c0c0c0c0{n:04d}" for n in range(3)}
    assert len(left[schema.verdicts.name]) == 2 * len(left[schema.rows.name])

    wait_for(lambda: not locked_by_the_killed(postgres_url), TIMEOUT_S, "the killed copy's end")
    assert copy(source_url, postgres_url).startswith("copied 3 jobs (3 already there)")
    assert contents(target.engine) == contents(source.engine)


def locked_by_the_killed(postgres_url: str) -> bool:
    """Whether the server still holds a transaction of the killed copy (its socket closed)."""
    with psycopg.connect(libpq_url(postgres_url), autocommit=True) as check:
        found = check.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = "
            "(SELECT oid FROM pg_database WHERE datname = current_database())"
        ).fetchone()
    return found is not None and found[0] > 0


def count(engine: Engine, table: sa.Table) -> int:
    with engine.connect() as connection:
        return int(connection.execute(sa.select(sa.func.count()).select_from(table)).one()[0])


def test_a_source_of_an_older_schema_is_refused_until_upgraded(
    postgres_url: str, tmp_path: Path
) -> None:
    from alembic import command

    source_url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    place = archive_place(source_url)
    assert place is not None
    config = alembic_config()
    with writing(_engine(place.url)) as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
    refused = run_evalq(bare_env(), "archive", "--from", source_url, "--to", postgres_url)
    line = one_line_refusal(refused)
    assert f"has schema revision 0001, older than this evalq's {HEAD}: upgrade it" in line
    assert schema_revision(_engine(place.url)) == "0001"  # a copy never changes its source
    assert not sa.inspect(target_engine(postgres_url)).has_table(schema.jobs.name)

    upgraded = run_evalq(bare_env(), "jobs", "--archive-url", source_url)  # the advice
    assert upgraded.returncode == 0, upgraded.stderr
    assert copy(source_url, postgres_url).startswith("copied 0 jobs (0 already there)")

    usage = run_evalq(bare_env(), "archive", "--from", source_url)
    assert usage.returncode == 2 and "--to URL" in usage.stderr, usage.stderr
