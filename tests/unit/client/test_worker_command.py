"""`evalq worker` becomes `celery worker`: what it asks Celery for follows the settings, since a
deployed worker is configured by its environment alone."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from evalq.client import cli
from evalq.client.cli import serve

# What `evalq worker` puts in its own environment for the celery it becomes: a test that runs
# it in-process must restore them, or a later test's Settings() reads the worker's sizes.
WORKER_ENV = ("EVALQ_WORKER_POOL", "EVALQ_WORKER_CONCURRENCY")


def _argv(monkeypatch: pytest.MonkeyPatch, *args: str, **env: str) -> list[str]:
    from evalq.worker.settings import get_settings

    for name in WORKER_ENV:  # the command sets both:
        monkeypatch.setenv(name, "unset")  # recorded, so monkeypatch restores them afterwards
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()  # read this environment, as a fresh worker process would
    seen: list[list[str]] = []
    monkeypatch.setattr(serve.os, "execv", lambda _exe, argv: seen.append(list(argv)))
    monkeypatch.setattr(serve, "_raise_open_files_limit", lambda: None)
    monkeypatch.setattr(serve, "_refuse_without_a_judge", lambda _settings: None)
    result = CliRunner().invoke(cli.main, ["worker", *args])
    assert result.exit_code == 0, result.output
    (argv,) = seen
    get_settings.cache_clear()
    return argv


def test_events_for_flower_are_on_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    argv = _argv(monkeypatch)
    assert "-E" in argv and "--pool=gevent" in argv and "--concurrency=200" in argv


def test_events_off_means_no_events_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    argv = _argv(monkeypatch, "--pool", "threads", EVALQ_TASK_EVENTS="false")
    assert "-E" not in argv and "--pool=threads" in argv and "--concurrency=16" in argv


def test_no_judge_refuses_before_celery_and_the_flag_skips_the_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The check runs before anything is exec'd; its line is the only output (the full
    matrix of settings: tests/unit/worker/judges/test_judge_check.py, through the CLI:
    tests/integration/reliability/test_worker_judge.py)."""
    from evalq.client.cli.exit_codes import NO_JUDGE
    from evalq.worker.settings import get_settings

    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "EVALQ_GEMINI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name in WORKER_ENV:  # the started command sets them: restored afterwards
        monkeypatch.setenv(name, "unset")
        monkeypatch.delenv(name)
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "false")
    get_settings.cache_clear()
    seen: list[list[str]] = []
    monkeypatch.setattr(serve.os, "execv", lambda _exe, argv: seen.append(list(argv)))
    monkeypatch.setattr(serve, "_raise_open_files_limit", lambda: None)
    refused = CliRunner().invoke(cli.main, ["worker"])
    assert refused.exit_code == NO_JUDGE and not seen
    assert refused.output.startswith("evalq worker: no judge to ask: set GEMINI_API_KEY")
    assert len(refused.output.splitlines()) == 1
    started = CliRunner().invoke(cli.main, ["worker", "--no-judge-check"])
    assert started.exit_code == 0, started.output
    assert len(seen) == 1 and "--no-judge-check" not in seen[0]
    get_settings.cache_clear()
