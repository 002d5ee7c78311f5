"""Regrading from the archive alone: every metric's job run on real workers, its dataset file
deleted and its Redis keys forgotten, then judged again by another judge online and in batch
mode, on SQLite and on PostgreSQL. Gecko asks the frozen questions (the rubric writer's
counter at the fake does not move); a row whose image is gone refuses the regrade."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
import sqlalchemy as sa

from evalq.core.judge import SIMULATED_MODEL_VERSION
from tests.support import batches
from tests.support.archive import archive_for_module, forget_in_redis, wait_archived
from tests.support.cli import evalq_stdout, one_line_refusal, run_evalq
from tests.support.metric_examples import METRICS, metric_examples
from tests.support.stack import Stack, stack

pytestmark = pytest.mark.integration
OnArchive = Callable[[str], Stack]
RUBRIC_WRITER = (
    "gemini-2.5-pro"  # the Gecko and rubric jobs' rubric model: only a rubric call reaches it
)
NEW_JUDGE = "gemini-2.5-flash-lite"


@pytest.fixture(scope="module")
def regrade_stacks(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OnArchive]:
    """The stack archiving to the given backend, started when first asked for."""
    started: dict[str, Stack] = {}
    with ExitStack() as stop_all:

        def of(backend: str) -> Stack:
            if backend not in started:
                folder = tmp_path_factory.mktemp(f"regrade-{backend}")
                url = stop_all.enter_context(archive_for_module(backend, request, folder))
                s = stop_all.enter_context(
                    stack(folder / "stack", EVALQ_ARCHIVE_URL=url, **batches.FAST_POLLS)
                )
                started[backend] = s
            return started[backend]

        yield of


def _flags(metric: str, flags: list[str]) -> dict[str, object]:
    """The example's flags as Client.submit keywords."""
    if metric == "rank":
        return {"options": {"candidates": flags[1].split(",")}}
    if metric == "pointwise":
        return {"options": {"template": flags[1]}}
    if metric.startswith("gecko"):
        return {"options": {"rubric_model": RUBRIC_WRITER}}
    if metric == "rubric":
        return {"options": {"rubric_model": RUBRIC_WRITER, "candidates": flags[1].split(",")}}
    return {}


def _archived_and_forgotten(s: Stack, folder: Path, metrics: tuple[str, ...]) -> dict[str, str]:
    """Each metric's example judged, archived, its dataset file deleted and its Redis keys
    gone: metric -> job id."""
    client = s.client(archive_url=s.env()["EVALQ_ARCHIVE_URL"])
    examples = metric_examples(folder)
    jobs = {}
    for metric in metrics:
        dataset, flags = examples[metric]
        jobs[metric] = client.submit(metric, dataset, **_flags(metric, flags)).job_id
    for job in jobs.values():
        assert client.wait(job, timeout_s=300).status == "finished"
    redis = s.redis_client()
    wait_archived(redis, *jobs.values())
    for metric in metrics:
        examples[metric][0].unlink()
    assert forget_in_redis(redis, *jobs.values()) > 0
    return jobs


def _question_sets(s: Stack, job: str) -> set[str | None]:
    client = s.client(archive_url=s.env()["EVALQ_ARCHIVE_URL"])
    return {r.question_set for r in client.results(job)}


def _set_count(s: Stack) -> int:
    from evalq.worker.archive import schema
    from evalq.worker.archive.archive import Archive

    archive = Archive.at(s.env()["EVALQ_ARCHIVE_URL"])
    assert archive is not None
    with archive.engine.connect() as connection:
        count = sa.select(sa.func.count()).select_from(schema.question_sets)
        return int(connection.execute(count).one()[0])


def _regrade_all(s: Stack, jobs: dict[str, str], mode: str, tmp_path: Path) -> dict[str, str]:
    """Every job regraded by NEW_JUDGE in `mode`, waited for and archived; checked alike."""
    import evalq

    settings_client = s.client(archive_url=s.env()["EVALQ_ARCHIVE_URL"])
    sets_before = _set_count(s)
    rubric_calls = s.stats()["by_model"].get(RUBRIC_WRITER, 0)
    new = {
        metric: evalq.regrade(job, NEW_JUDGE, mode=mode, settings=settings_client.settings).job_id
        for metric, job in jobs.items()
    }
    for metric, job in new.items():
        summary = settings_client.wait(job, timeout_s=300)
        old = settings_client.summary(jobs[metric])
        assert summary.status == "finished", metric
        assert summary.regrades == jobs[metric]
        assert summary.rows_total == old.rows_total and summary.rows_scored > 0, metric
        assert summary.mode == mode
        assert summary.judge_setup["judge_models"] == [NEW_JUDGE]
        assert "rubric" not in summary.tokens_by_role, metric
        assert summary.candidate_calls == 0, metric  # a written response is judged, not rewritten
        if metric.startswith("gecko") or metric == "rubric":
            assert _question_sets(s, job) == _question_sets(s, jobs[metric]) != {None}
            if mode == "batch":  # one round: the validators'; no rubric round before it
                assert {r.round for r in settings_client.batches(job)} == {1}
    wait_archived(s.redis_client(), *new.values())
    assert s.stats()["by_model"].get(RUBRIC_WRITER, 0) == rubric_calls  # no rubric written
    assert _set_count(s) == sets_before  # the frozen sets are never written again
    return new


def test_every_metric_regrades_from_the_archive_alone_online_then_in_batch(
    regrade_stacks: OnArchive, tmp_path: Path
) -> None:
    s = regrade_stacks("sqlite")
    jobs = _archived_and_forgotten(s, tmp_path / "data", METRICS)
    online = _regrade_all(s, jobs, "online", tmp_path)
    shown = evalq_stdout(s.env(), "status", online["pointwise"])
    assert f"job {jobs['pointwise']} (its inputs, judged again)" in shown
    _regrade_all(s, jobs, "batch", tmp_path)
    _judge_version_moves(s, jobs["pointwise"], online["pointwise"])
    _regraded_from_the_command_line(s, jobs["pointwise"])


def _regraded_from_the_command_line(s: Stack, first: str) -> None:
    """`evalq regrade` with the flags that change the judging: the new job keeps them."""
    env = s.env()
    argv = ["regrade", first, "--rows", "1", "--samples", "3", "--thinking-budget", "judge=0"]
    done = run_evalq(env, *argv, "--name", "regraded-cli", "--wait", "--json")
    assert done.returncode == 0, done.stderr
    job = json.loads(done.stdout)["job_id"]
    assert f"job {job}: regrades {first}, pointwise, 1 rows" in " ".join(done.stderr.split())
    config = s.client(archive_url=env["EVALQ_ARCHIVE_URL"]).config(job)
    assert (config.regrades, config.name, config.rows_total) == (first, "regraded-cli", 1)
    assert config.options["samples"] == 3 and config.thinking["judge"] == 0
    assert config.options["template"] == "summarization_quality"


def _judge_version_moves(s: Stack, first: str, regraded: str) -> None:
    """The fake's judge answering as a new version: a regrade of two rows by the job's own
    judge says so in `evalq status` (the regrade by another judge did not), and `evalq jobs
    --judge-version` tells the versions apart."""
    import evalq

    env = s.env()
    client = s.client(archive_url=env["EVALQ_ARCHIVE_URL"])
    judge = client.summary(first).judge_model
    moved = s.post("/model-version", {"suffix": "2"})["model_version"]
    try:
        again = evalq.regrade(first, rows=2, seed=7, settings=client.settings).job_id
        summary = client.wait(again, timeout_s=300)
    finally:
        s.post("/model-version", {"suffix": None})
    assert summary.status == "finished" and summary.rows_total == 2
    said = run_evalq(env, "status", again).stderr
    assert f"judge version changed since {first}: {judge} answered as {moved}" in said
    assert f"`evalq drift {first} {again}`" in said
    assert "judge version changed" not in run_evalq(env, "status", regraded).stderr
    listed = json.loads(evalq_stdout(env, "jobs", "--judge-version", moved, "--json"))
    assert [j["job_id"] for j in listed] == [again]
    wait_archived(s.redis_client(), again)
    forget_in_redis(s.redis_client(), again)
    from_archive = json.loads(evalq_stdout(env, "jobs", "--judge-version", moved, "--json"))
    assert [j["job_id"] for j in from_archive] == [again]
    before = json.loads(
        evalq_stdout(env, "jobs", "--judge-version", SIMULATED_MODEL_VERSION, "--json")
    )
    assert first in {j["job_id"] for j in before} and again not in {j["job_id"] for j in before}


def test_regrade_on_postgresql_and_a_row_whose_image_is_gone(
    regrade_stacks: OnArchive, tmp_path: Path
) -> None:
    s = regrade_stacks("postgresql")
    jobs = _archived_and_forgotten(s, tmp_path / "data", METRICS)
    _regrade_all(s, jobs, "online", tmp_path)
    _two_candidates_regraded(s, tmp_path / "two")
    env = s.env()
    client = s.client(archive_url=env["EVALQ_ARCHIVE_URL"])
    gone = client.stored_inputs(jobs["gecko-image"])[1]
    Path(gone.media["image"].value).unlink()
    refused = one_line_refusal(run_evalq(env, "regrade", jobs["gecko-image"], "--json"))
    assert f"line {gone.line} (row {gone.id}) image: file not found" in refused
    assert "nothing was submitted" in refused


def _two_candidates_regraded(s: Stack, folder: Path) -> None:
    """A job of two candidates regraded from the archive: every cell of the first two rows."""
    import evalq
    from evalq.examples.ratings import write_pointwise_candidates_example

    client = s.client(archive_url=s.env()["EVALQ_ARCHIVE_URL"])
    dataset = write_pointwise_candidates_example(folder)
    options = {"template": "summarization_quality", "candidates": ["faithful", "poor"]}
    first = client.submit("pointwise", dataset, options=options).job_id
    assert client.wait(first, timeout_s=300).status == "finished"
    wait_archived(s.redis_client(), first)
    dataset.unlink()
    forget_in_redis(s.redis_client(), first)
    again = evalq.regrade(first, NEW_JUDGE, rows=2, settings=client.settings).job_id
    summary = client.wait(again, timeout_s=300)
    assert summary.status == "finished" and list(summary.candidates) == ["faithful", "poor"]
    cells = [(r.line, r.candidate) for r in client.results(again)]
    firsts = sorted({line for line, _ in cells})[:2]
    assert cells == [(line, c) for line in firsts for c in ("faithful", "poor")]
    assert firsts == sorted({r.line for r in client.results(first)})[:2]
