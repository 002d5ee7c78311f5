"""Jobs gone from Redis read from the archive, byte for byte: for every metric, two jobs run on
real workers against the fake judge, the reading commands' output is captured, the jobs' Redis
keys are deleted (what their expiry does), and the same commands must print the same bytes,
the comparisons the same figures. Once with a SQLite archive and once with PostgreSQL.

The tests share a stack per archive backend (`on_archive`): each reads only its own jobs, or
counts the jobs the archive already held before its own."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.support.archive import BACKENDS, archive_for_module, forget_in_redis, wait_archived
from tests.support.metric_examples import METRICS, metric_examples, submit_argv
from tests.support.stack import Stack, stack

pytestmark = pytest.mark.integration
OnArchive = Callable[[str], Stack]


@pytest.fixture(scope="module")
def on_archive(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OnArchive]:
    """The stack whose workers archive to the given backend (EVALQ_ARCHIVE_URL in its env),
    started when a test first asks for that backend and kept for the module's other tests."""
    started: dict[str, Stack] = {}
    with ExitStack() as stop_all:

        def of(backend: str) -> Stack:
            if backend not in started:
                folder = tmp_path_factory.mktemp(f"archive-{backend}")
                url = stop_all.enter_context(archive_for_module(backend, request, folder))
                s = stop_all.enter_context(stack(folder / "stack", EVALQ_ARCHIVE_URL=url))
                started[backend] = s
            return started[backend]

        yield of


def _submit(env: dict[str, str], metric: str, dataset: Path, flags: list[str], name: str) -> str:
    """`evalq run` (or `evalq rank`) without waiting; the job's id."""
    argv = submit_argv(metric, dataset, flags)
    return str(json.loads(_stdout(env, *argv, "--name", name, "--json"))["job_id"])


def _finished(s: Stack, *job_ids: str) -> None:
    client = s.client()
    for job_id in job_ids:
        assert client.wait(job_id, timeout_s=300).status == "finished"


def _stdout(env: dict[str, str], *argv: str) -> str:
    """What `evalq ARGV` prints on stdout, the command run in this process (the same click
    command the shell runs; a child process per command cost most of this test's time), with
    the Redis and the archive of `env` named as flags, so no setting read earlier is reused."""
    from click.testing import CliRunner

    from evalq.client.cli import main

    named = ["--redis-url", env["EVALQ_REDIS_URL"], "--archive-url", env["EVALQ_ARCHIVE_URL"]]
    done = CliRunner().invoke(main, [*argv, *named], catch_exceptions=False)
    assert done.exit_code == 0, f"{argv}: {done.stdout}{done.stderr}"
    return done.stdout


def _listed(env: dict[str, str]) -> set[str]:
    """The ids `evalq jobs` lists, from Redis and the archive."""
    return {j["job_id"] for j in json.loads(_stdout(env, "jobs", "--json", "--limit", "50"))}


def _history(env: dict[str, str]) -> dict[str, str]:
    return {
        "jobs": _stdout(env, "jobs", "--limit", "50"),
        "jobs --json": _stdout(env, "jobs", "--json", "--limit", "50"),
    }


def _readings(env: dict[str, str], a: str, b: str, html: Path) -> dict[str, str]:
    """What each reading command prints on stdout (and the report's bytes)."""
    commands: dict[str, list[str]] = {
        "status": ["status", a],
        "status --json": ["status", a, "--json"],
        "results jsonl": ["results", a, "--format", "jsonl"],
        "results csv": ["results", a, "--format", "csv"],
        "compare": ["compare", a, b],
        "compare --json": ["compare", a, b, "--json"],
        "leaderboard": ["leaderboard", a, b],
        "wait": ["wait", a, "--json"],
    }
    out = {label: _stdout(env, *argv) for label, argv in commands.items()}
    _stdout(env, "report", a, "--html", str(html))
    out["report --html"] = html.read_text(encoding="utf-8")
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_reading_command_prints_the_same_once_redis_forgot_the_job(
    backend: str, on_archive: OnArchive, tmp_path: Path
) -> None:
    """Every metric, two jobs each (the second on the first's cached replies), all at once."""
    examples = metric_examples(tmp_path / "data")
    metrics = METRICS
    s = on_archive(backend)
    env = s.env()
    redis = s.redis_client()
    earlier = _listed(env)  # the other tests' jobs on this archive
    firsts = {m: _submit(env, m, *examples[m], f"{m} first") for m in metrics}
    _finished(s, *firsts.values())
    pairs = {m: (firsts[m], _submit(env, m, *examples[m], f"{m} second")) for m in metrics}
    every = [job for pair in pairs.values() for job in pair]
    _finished(s, *every)
    wait_archived(redis, *every)
    history = _history(env)
    before = {
        metric: _readings(env, a, b, tmp_path / f"{metric}-before.html")
        for metric, (a, b) in pairs.items()
    }
    assert forget_in_redis(redis, *every) > 0
    assert not any(redis.exists(f"evalq:job:{job}") for job in every)
    after = {
        metric: _readings(env, a, b, tmp_path / f"{metric}-after.html")
        for metric, (a, b) in pairs.items()
    }
    assert _history(env) == history
    assert {j["job_id"] for j in json.loads(history["jobs --json"])} == set(every) | earlier
    for metric in metrics:
        for label, text in before[metric].items():
            assert after[metric][label] == text, (
                f"{metric}: `{label}` differs once from the archive"
            )
        compared = json.loads(after[metric]["compare --json"])
        assert compared == json.loads(before[metric]["compare --json"])


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_api_reads_the_archive_and_history_is_one_frame(
    backend: str, on_archive: OnArchive, tmp_path: Path
) -> None:
    """evalq.Job, evalq.compare and evalq.history on jobs Redis forgot; and `evalq calibrate`
    reading them."""
    import evalq
    from evalq.examples.calibration import HUMAN_COLUMN, write_calibration_example

    dataset = write_calibration_example(tmp_path / "data")
    flags = ["--template", "summarization_quality"]
    s = on_archive(backend)
    env = s.env()
    url = env["EVALQ_ARCHIVE_URL"]
    a = _submit(env, "pointwise", dataset, flags, "history a")
    b = _submit(env, "pointwise", dataset, ["--template", "fluency"], "history b")
    _finished(s, a, b)
    client = s.client(archive_url=url)
    wait_archived(s.redis_client(), a, b)
    calibrate = ["calibrate", "--human", HUMAN_COLUMN, "--job", f"a={a}", "--job", f"b={b}"]
    calibrated = _stdout(env, *calibrate, "--json")
    summary = evalq.Job(a, client).summary()
    results = evalq.Job(a, client).results()
    compared = evalq.compare(a, b, client=client).overall
    forget_in_redis(s.redis_client(), a, b)
    fresh = s.client(archive_url=url)  # no memo of the jobs from before
    assert evalq.Job(a, fresh).summary() == summary
    assert evalq.Job(a, fresh).results().equals(results)
    assert evalq.Job(a, fresh).wait(timeout_s=5) == summary
    assert evalq.compare(a, b, client=fresh).overall.equals(compared)
    assert _stdout(env, *calibrate, "--json") == calibrated
    frame = evalq.history(name="history", reader=fresh)
    assert list(frame.columns[:6]) == [
        "job_id",
        "job_name",
        "job_created_at",
        "metric",
        "dataset",
        "job_status",
    ]
    assert set(frame["job_id"]) == {a, b}
    assert len(frame) == 2 * len(results)
    assert frame.loc[frame["job_id"] == a, "score"].tolist() == results["score"].tolist()


def test_another_host_reads_the_job_from_postgresql(on_archive: OnArchive, tmp_path: Path) -> None:
    """A client elsewhere: another HOME, another working folder, a Redis that never had the
    job, nothing in common with the workers but EVALQ_ARCHIVE_URL."""
    from devtools.local import EVALQ
    from tests.support.cli import bare_env, run_command

    dataset, flags = metric_examples(tmp_path / "data")["gecko-image"]
    s = on_archive("postgresql")
    env = s.env()
    postgres_url = env["EVALQ_ARCHIVE_URL"]
    a = _submit(env, "gecko-image", dataset, flags, "host a")
    b = _submit(env, "gecko-image", dataset, flags, "host b")
    _finished(s, a, b)
    wait_archived(s.redis_client(), a, b)
    here = {label: _stdout(env, *argv) for label, argv in _elsewhere(a, b).items()}
    home = tmp_path / "elsewhere" / "home"
    cwd = tmp_path / "elsewhere" / "work"
    home.mkdir(parents=True)
    cwd.mkdir(parents=True)
    other = bare_env()
    other.pop("XDG_DATA_HOME", None)
    other |= {
        "HOME": str(home),
        "EVALQ_ARCHIVE_URL": postgres_url,
        "EVALQ_REDIS_URL": s.redis.url.rsplit("/", 1)[0] + "/9",  # a Redis without the job
    }
    there = {}
    for label, argv in _elsewhere(a, b).items():
        done = run_command([*EVALQ, *argv], other, cwd=cwd)
        assert done.returncode == 0, f"{label}: {done.stdout}{done.stderr}"
        there[label] = done.stdout
    assert there == here
    assert a in there["jobs"] and b in there["jobs"]
    assert not (home / ".local").exists()  # no default archive made in that HOME


def _elsewhere(a: str, b: str) -> dict[str, list[str]]:
    return {
        "jobs": ["jobs"],
        "status": ["status", a],
        "results": ["results", a, "--format", "csv"],
        "compare": ["compare", a, b],
    }
