"""The three commands that wait on a job (`run --wait`, `evalq wait`, `resume --wait`) take
Ctrl-C from one call, evalq.client.cli.attach.attached, entered before their first line about
the job: a user reads that line and presses Ctrl-C, and that SIGINT must only set the wait's
flag (exit 130, the job runs on), never raise KeyboardInterrupt inside a print. The commands run
in this process on the main thread, and a real SIGINT is raised right after the line is printed:
signal.raise_signal runs the handler before it returns, so nothing here depends on timing."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner, Result

from evalq.client import watch
from evalq.client.cli import attach, control, main, read, submit
from evalq.client.cli.attach import attached, forget_job, noted_job
from evalq.client.cli.common import err_console
from evalq.client.cli.submit import wait_with_progress
from evalq.client.client import Client
from evalq.worker.store import Store
from tests.support.scratch import plant_job

COMMANDS: tuple[ModuleType, ...] = (attach, submit, read, control)


def test_attached_notes_the_job_and_makes_ctrl_c_its_flag_until_it_ends() -> None:
    assert threading.current_thread() is threading.main_thread()
    forget_job()
    before = signal.getsignal(signal.SIGINT)
    with attached("3f2a9c1b7d0e") as stop:
        assert noted_job() == "3f2a9c1b7d0e"
        assert stop is not None and not stop.is_set()
        assert signal.getsignal(signal.SIGINT) is not before  # else the SIGINT would end pytest
        signal.raise_signal(signal.SIGINT)  # the handler runs before this returns
        assert stop.is_set()  # and raised nothing
    assert signal.getsignal(signal.SIGINT) is before  # Python's own handler back
    forget_job()


def test_off_the_main_thread_attached_notes_the_job_and_sets_no_handler() -> None:
    forget_job()
    before = signal.getsignal(signal.SIGINT)
    got: list[Any] = []

    def enter() -> None:
        with attached("3f2a9c1b7d0e") as stop:
            got.extend([stop, noted_job(), signal.getsignal(signal.SIGINT)])

    thread = threading.Thread(target=enter)
    thread.start()
    thread.join()
    assert got == [None, "3f2a9c1b7d0e", before]
    forget_job()


def test_the_wait_opens_no_flag_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """The flag is the caller's (attached) or none: the wait sets no SIGINT handler itself."""
    seen: list[tuple[Any, Any]] = []

    def spy_wait(_reader: Any, _job_id: str, *, stop: Any, **_: Any) -> str:
        seen.append((stop, signal.getsignal(signal.SIGINT)))
        return "summary"

    monkeypatch.setattr(watch, "wait", spy_wait)
    before = signal.getsignal(signal.SIGINT)
    assert wait_with_progress(None, "3f2a9c1b7d0e", 1, quiet=True) == "summary"
    assert seen == [(None, before)]
    with attached("3f2a9c1b7d0e") as stop:
        wait_with_progress(None, "3f2a9c1b7d0e", 1, quiet=True, stop=stop)
    assert seen[1][0] is stop
    forget_job()


# Pauses a wait may take before the test calls it stuck: with the flag set by the SIGINT, the
# first pause ends the wait, so a wait still going after these is one no Ctrl-C reached.
PAUSES = 20


def ctrl_c_after_the_first_line(
    monkeypatch: pytest.MonkeyPatch, job: Callable[[], str | None], args: list[str]
) -> tuple[Result, list[str]]:
    """Run `evalq ARGS` here, on the main thread, raising SIGINT right after stderr's first
    line naming the job (`job()`: its id, once known); return the result and what happened,
    in order: "attached" when the command entered attached for that job, "line" when that
    first line was printed."""
    events: list[str] = []
    real_attached = attach.attached

    @contextmanager
    def spy_attached(job_id: str) -> Iterator[threading.Event | None]:
        events.append("attached" if job_id == job() else f"attached {job_id}")
        with real_attached(job_id) as stop:
            yield stop

    for module in COMMANDS:
        monkeypatch.setattr(module, "attached", spy_attached, raising=False)
    console = err_console()
    real_print = console.print

    def print_then_ctrl_c(*objects: Any, **kwargs: Any) -> None:
        real_print(*objects, **kwargs)
        job_id = job()
        if "line" not in events and job_id and any(job_id in str(o) for o in objects):
            events.append("line")
            signal.raise_signal(signal.SIGINT)  # the handler has run when this returns

    monkeypatch.setattr(console, "print", print_then_ctrl_c)
    real_pause, pauses = watch._pause, []

    def bounded_pause(seconds: float, stop: threading.Event | None) -> None:
        pauses.append(seconds)
        assert len(pauses) <= PAUSES, "the wait goes on: no Ctrl-C reached it"
        real_pause(seconds, stop)

    monkeypatch.setattr(watch, "_pause", bounded_pause)
    before = signal.getsignal(signal.SIGINT)
    forget_job()
    try:
        result = CliRunner().invoke(main, args)
    finally:
        forget_job()
    assert signal.getsignal(signal.SIGINT) is before
    return result, events


def assert_detached(result: Result, events: list[str], job_id: str | None) -> None:
    assert result.exit_code == 130, result.output
    assert f"stopped waiting; job {job_id} keeps running on the workers" in result.output
    assert events == ["attached", "line"], result.output  # attached, then the line


def test_evalq_wait_takes_ctrl_c_from_attached_before_its_first_line(
    monkeypatch: pytest.MonkeyPatch, store: Store, scratch_url: str
) -> None:
    job_id = plant_job(store, 3)  # running, and stays so: no worker watches this database
    result, events = ctrl_c_after_the_first_line(
        monkeypatch, lambda: job_id, ["wait", job_id, "--redis-url", scratch_url]
    )
    assert_detached(result, events, job_id)


def test_resume_wait_takes_ctrl_c_from_attached_before_its_first_line(
    monkeypatch: pytest.MonkeyPatch, store: Store, scratch_url: str
) -> None:
    job_id = plant_job(store, 3)  # running, not finished: resume has it go on, and waits
    result, events = ctrl_c_after_the_first_line(
        monkeypatch, lambda: job_id, ["resume", job_id, "--wait", "--redis-url", scratch_url]
    )
    assert_detached(result, events, job_id)


def test_run_wait_takes_ctrl_c_from_attached_before_its_first_line(
    monkeypatch: pytest.MonkeyPatch, scratch_url: str, tmp_path: Path
) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text('{"prompt": "p", "response": "r"}\n{"prompt": "q", "response": "s"}\n')
    submitted: list[str] = []
    real_submit = Client.submit

    def submit_noting_its_id(self: Client, *args: Any, **kwargs: Any) -> Any:
        done = real_submit(self, *args, **kwargs)
        submitted.append(done.job_id)
        return done

    monkeypatch.setattr(Client, "submit", submit_noting_its_id)
    args = ["run", "pointwise", str(data), "--template", "fluency", "--wait"]
    result, events = ctrl_c_after_the_first_line(
        monkeypatch,
        lambda: submitted[0] if submitted else None,
        [*args, "--redis-url", scratch_url],
    )
    assert len(submitted) == 1, result.output
    assert_detached(result, events, submitted[0])
