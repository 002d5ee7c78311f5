"""The archive's store on both backends, real SQLite files and a real PostgreSQL server: a job
written twice is one record, writers racing leave one whole record, the schema is created by
its migrations and an archive of a newer schema is refused, history filters, question sets,
and an archive that can't be reached or entered is one clear error naming it."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
import sqlalchemy as sa

from devtools.local import free_port
from evalq.core.counters import JobCounters
from evalq.core.models import Question, Repeats, RowInput, RowResult, Sample, Verdict
from evalq.core.summary import build_summary
from evalq.worker.archive import schema
from evalq.worker.archive.archive import Archive
from evalq.worker.archive.engine import HEAD, VERSION_TABLE, head_revision, open_archive
from evalq.worker.archive.errors import ArchiveSchemaTooNew, ArchiveUnavailable
from evalq.worker.archive.filters import JobFilter
from evalq.worker.archive.place import archive_place
from evalq.worker.archive.record import ArchivedRow, JobRecord
from tests.support.archive import BACKENDS, archive_url_for
from tests.support.job_configs import job_config

pytestmark = pytest.mark.integration


@pytest.fixture(params=BACKENDS)
def archive(request: pytest.FixtureRequest, tmp_path: Path) -> Archive:
    found = Archive.at(archive_url_for(request.param, request, tmp_path))
    assert found is not None
    return found


QUESTIONS = [Question(question="Is there a cat?", expected="yes", tag="object")]


def record(
    job_id: str,
    *,
    rows: int = 3,
    metric: str = "gecko-image",
    name: str | None = None,
    dataset: str = "/data/t2i.jsonl",
    created_at: float = 1_700_000_000.0,
    score: float = 1.0,
) -> JobRecord:
    config = job_config(
        metric, job_id=job_id, dataset=dataset, rows_total=rows, created_at=created_at, name=name
    )
    results = [
        RowResult(
            id=f"r{line}",
            line=line,
            prompt=f"prompt {line}",
            status="scored",
            score=score,
            question_set="f" * 16,
        )
        for line in range(1, rows + 1)
    ]
    counters = JobCounters(status="finished", rows_done=rows, rows_scored=rows)
    summary = build_summary(config, counters, {}, results, created_at + 5)
    verdict = Verdict(index=0, status="ok", answer="yes", result=1, model_version="v-1")
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
                verdicts=[(0, verdict.model_dump_json())],
            )
            for r in results
        ],
        question_sets={"f" * 16: "[" + QUESTIONS[0].model_dump_json() + "]"},
        written_by="test",
    )


def counts(archive: Archive) -> dict[str, int]:
    with archive.engine.connect() as connection:
        return {
            table.name: int(
                connection.execute(sa.select(sa.func.count()).select_from(table)).one()[0]
            )
            for table in (schema.jobs, schema.rows, schema.verdicts, schema.question_sets)
        }


def test_a_job_written_twice_is_one_record_and_the_second_write_wins(archive: Archive) -> None:
    archive.write(record("aaaaaaaaaaa1", rows=3, score=0.5))
    first = counts(archive)
    assert first == {
        "archive_jobs": 1,
        "archive_rows": 3,
        "archive_verdicts": 3,
        "archive_question_sets": 1,
    }
    archive.write(record("aaaaaaaaaaa1", rows=3, score=1.0))
    assert counts(archive) == first
    job = archive.job("aaaaaaaaaaa1")
    assert job is not None
    assert [r.score for r in job.results] == [1.0, 1.0, 1.0]
    assert job.summary.mean_score == 1.0
    with archive.engine.connect() as connection:
        versions = connection.execute(sa.select(schema.verdicts.c.model_version)).scalars().all()
    assert versions == ["v-1", "v-1", "v-1"]


def test_writers_racing_on_one_job_leave_one_whole_record(archive: Archive) -> None:
    errors: list[BaseException] = []

    def write(score: float) -> None:
        try:
            archive.write(record("bbbbbbbbbbb2", rows=200, score=score))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i / 10,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert counts(archive)["archive_rows"] == 200
    job = archive.job("bbbbbbbbbbb2")
    assert job is not None
    assert len({r.score for r in job.results}) == 1  # all rows from one writer, never a mix


def test_history_filters_and_newest_first(archive: Archive) -> None:
    archive.write(record("ccccccccccc1", name="ckpt 2", created_at=1_000.0))
    archive.write(record("ccccccccccc2", name="ckpt 9", created_at=2_000.0, metric="gecko-video"))
    archive.write(record("ccccccccccc3", name="other", created_at=3_000.0, dataset="/b/x.csv"))

    def ids(**which: object) -> list[str]:
        return [s.job_id for s in archive.summaries(JobFilter(**which))]  # type: ignore[arg-type]

    assert ids() == ["ccccccccccc3", "ccccccccccc2", "ccccccccccc1"]
    assert ids(metric="gecko-video") == ["ccccccccccc2"]
    assert ids(name="CKPT") == ["ccccccccccc2", "ccccccccccc1"]
    assert ids(name="ckpt 2", exact_name=True) == ["ccccccccccc1"]
    assert ids(dataset="x.csv") == ["ccccccccccc3"]
    assert ids(since=1_500.0) == ["ccccccccccc3", "ccccccccccc2"]
    assert ids(limit=1) == ["ccccccccccc3"]
    assert ids(name="100%_") == []  # LIKE's wildcards are the user's text, not patterns
    assert archive.ids_with_prefix("ccccccccccc") == [
        "ccccccccccc3",
        "ccccccccccc2",
        "ccccccccccc1",
    ]


def test_question_sets_are_kept_by_prompt(archive: Archive) -> None:
    archive.write(record("ddddddddddd1", rows=2))
    sets = archive.question_sets("ddddddddddd1")
    assert sets == {"prompt 1": QUESTIONS, "prompt 2": QUESTIONS}


def test_the_schema_is_its_migrations_and_head_is_alembics(archive: Archive) -> None:
    assert head_revision() == HEAD
    archive.open()
    inspector = sa.inspect(archive.engine)
    tables = set(inspector.get_table_names())
    assert tables == {*schema.metadata.tables, VERSION_TABLE}
    for table in schema.metadata.sorted_tables:
        columns = {c["name"] for c in inspector.get_columns(table.name)}
        assert columns == set(table.columns.keys()), table.name


def test_an_archive_of_a_newer_schema_is_refused_and_not_written(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    for backend in BACKENDS:
        url = archive_url_for(backend, request, tmp_path / backend)
        (tmp_path / backend).mkdir()
        first = Archive.at(url)
        assert first is not None
        first.open()
        engine = first.engine  # its schema checked: used as it is below
        with engine.begin() as connection:
            connection.execute(sa.text(f"UPDATE {VERSION_TABLE} SET version_num = '9999'"))
        place = archive_place(url)
        assert place is not None
        from evalq.worker.archive import engine as engines

        engines._checked.pop(place.url, None)  # a new process would check it afresh
        later = Archive(place)
        with pytest.raises(ArchiveSchemaTooNew, match="revision 9999, newer than this evalq"):
            later.write(record("eeeeeeeeeee1"))
        with engine.connect() as connection:
            assert (
                connection.execute(sa.select(sa.func.count()).select_from(schema.jobs)).one()[0]
                == 0
            )


def test_an_archive_out_of_reach_or_refusing_us_is_one_line_naming_it() -> None:
    port = free_port()
    down = Archive.at(f"postgresql://evalq:hunter2@127.0.0.1:{port}/evalq")
    assert down is not None
    started = time.monotonic()
    with pytest.raises(ArchiveUnavailable) as raised:
        down.write(record("fffffffffff1"))
    message = str(raised.value)
    assert f"postgresql://evalq:***@127.0.0.1:{port}/evalq" in message
    assert "hunter2" not in message and "\n" not in message
    assert "OperationalError" in message
    assert time.monotonic() - started < 60  # connect_timeout: an error, never a hang


def test_a_role_the_server_does_not_know_is_refused_by_name(postgres_url: str) -> None:
    wrong = postgres_url.replace("postgres@", "nobody_here@", 1)
    archive = Archive.at(wrong)
    assert archive is not None
    with pytest.raises(ArchiveUnavailable, match='role "nobody_here" does not exist'):
        archive.job("fffffffffff2")


def test_an_unwritable_sqlite_path_names_the_file(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where a folder should be")
    archive = Archive.at(f"sqlite:///{blocker}/archive.sqlite")
    assert archive is not None
    with pytest.raises((ArchiveUnavailable, OSError)):
        open_archive(archive.place)


def test_the_commands_say_where_they_looked(scratch_url: str, tmp_path: Path) -> None:
    """A job id nowhere, an archive out of reach, and the history listed without it."""
    from tests.support.cli import bare_env, run_evalq

    env = bare_env() | {
        "EVALQ_REDIS_URL": scratch_url,
        "EVALQ_ARCHIVE_URL": f"sqlite:///{tmp_path / 'a.sqlite'}",
    }

    def flat(text: str) -> str:  # rich folds long lines at 80 columns
        return " ".join(text.split())

    nowhere = run_evalq(env, "status", "0123456789ab")
    assert nowhere.returncode == 2
    assert "no job '0123456789ab' in Redis at" in flat(nowhere.stderr)
    where = f"norinthearchiveatsqlite:///{tmp_path / 'a.sqlite'}"  # rich folds a long path
    assert where in "".join(nowhere.stderr.split())
    down = f"postgresql://evalq:hunter2@127.0.0.1:{free_port()}/evalq"
    refused = run_evalq(env, "status", "0123456789ab", "--archive-url", down)
    assert refused.returncode == 2
    assert "could not be used" in flat(refused.stderr) and "hunter2" not in refused.stderr
    listed = run_evalq(env, "jobs", "--archive-url", down)
    assert listed.returncode == 0
    assert "jobs in Redis only" in flat(listed.stderr)


def test_an_archive_of_0001_gains_owners_and_keeps_its_jobs(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Revision 0002 adds `owner`: a job archived before it keeps its record with no owner,
    and a job written after it has its submitter in the column and in its summary."""
    from alembic import command

    from evalq.worker.archive.engine import _engine, alembic_config, writing

    for backend in BACKENDS:
        url = archive_url_for(backend, request, tmp_path / backend)
        (tmp_path / backend).mkdir()
        place = archive_place(url)
        assert place is not None
        config = alembic_config()
        with writing(_engine(place.url)) as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "0001")
            old = record("eeeeeeeeeee1").config
            connection.execute(
                sa.text(
                    "INSERT INTO archive_jobs (job_id, metric, dataset, status, mode, "
                    "created_at, archived_at, rows_total, rows_done, rows_scored, rows_partial,"
                    " rows_failed, judge_model, simulated, config, summary, written_by, "
                    "evalq_version) VALUES ('eeeeeeeeeee1', 'gecko-image', 'd', 'finished', "
                    "'online', 1, 2, 0, 0, 0, 0, 0, 'm', false, :config, '{}', 'w', 'old')"
                ),
                {"config": old.model_dump_json()},
            )
        archive = Archive.at(url)
        assert archive is not None
        archive.open()  # migrates to the head
        mine = record("eeeeeeeeeee2")
        archive.write(replace(mine, config=mine.config.model_copy(update={"owner": "alice"})))
        with archive.engine.connect() as connection:
            found = connection.execute(sa.select(schema.jobs.c.job_id, schema.jobs.c.owner))
            owners = {job_id: owner for job_id, owner in found}
        assert owners == {"eeeeeeeeeee1": None, "eeeeeeeeeee2": "alice"}
        assert head_revision() == HEAD == "0002"


def test_the_noise_floor_and_each_verdicts_repeats_read_back(archive: Archive) -> None:
    base = record("aaaaaaaaaaa5", rows=2, metric="pointwise")
    repeats = [Repeats(unit="rating", samples=[Sample(answer="3"), Sample(answer="4")])]
    results = [
        RowResult.model_validate_json(row.result_json or "").model_copy(update={"repeats": repeats})
        for row in base.rows
    ]
    counters = JobCounters(status="finished", rows_done=2, rows_scored=2)
    summary = build_summary(base.config, counters, {}, results, 1_700_000_005.0)
    assert summary.noise_floor is not None
    rows = [
        replace(row, result_json=r.model_dump_json())
        for row, r in zip(base.rows, results, strict=True)
    ]
    archive.write(replace(base, summary_json=summary.model_dump_json(), rows=rows))
    job = archive.job("aaaaaaaaaaa5")
    assert job is not None
    assert job.summary.noise_floor == summary.noise_floor
    assert job.summary.noise_floor is not None and job.summary.noise_floor.split_share == 1.0
    assert [r.repeats for r in job.results] == [repeats, repeats]
