"""The row tasks (and batch mode's) run in this process against a real Redis and the fake Gemini
server, with no broker and no worker: a burst runner in the spirit of arq's burst mode and
dramatiq's StubBroker, so each branch of tasks/rows.py and tasks/batch.py gets a fast test of
its own.

What a worker would schedule is recorded instead, and the test decides what runs next:
- `submit` and `resume` go through the real Client; the messages it would publish
  (prepare_row) are queued here instead (`queue`).
- What the tasks schedule goes to the runner's scheduler (InProcessScheduler, handed to the
  task layer through evalq.worker.celery_app.scheduling). prepare_row's chord is recorded
  (`chords`); its header parts are queued, and its callback is queued once every part has ended,
  with their return values in order, as Celery's Redis result backend does: a part that ends twice
  (a redelivery) counts once, and the callback is queued once. A callback that comes early anyway
  (another backend, a lost claim) is a call the test makes itself (`aggregate`).
- What batch mode's tasks send (a poll, an ingest, the next sweep) is queued too, its
  countdown dropped: a poll is run again when the test runs it.
- A task that asks for a retry is not run again: its Outcome holds the countdown and the call
  the retry would make (`Outcome.retry`), to run with `run` when the test wants ("advance the
  clock"). Running any call twice is a redelivery.

Each call runs on a fresh runtime (evalq.worker.runtime.runtime() is rebuilt from the environment
this runner sets), as a task on a worker that has not cached the job's status: what one task
wrote (a pause, a verdict) is what the next one sees, with no timing involved. Judges (one per
model per process, evalq.worker.judges.gemini) are made anew for each runner, with its settings.

This is the one place where tasks run without a worker; the integration tests still run real
worker processes.
"""

from __future__ import annotations

import functools
import itertools
import ssl
import uuid
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest
import redis
from celery import Task
from celery.canvas import Signature
from celery.exceptions import Retry

import evalq.tasks.rows
from devtools.local import SECRET_ENV, free_port, wait_for
from evalq.client import Client  # the client side: moves with it
from evalq.worker.batch.names import POLL_BATCH
from evalq.worker.celery_app.app import PREPARE_ROW, get_app
from evalq.worker.celery_app.scheduling import Scheduler, use_scheduler
from evalq.worker.judges.gemini import forget_judges
from evalq.worker.runtime import runtime
from evalq.worker.settings import get_settings
from evalq.worker.store import Store
from tests.support.datasets import write_rows
from tests.support.stores import store_of

RUN_UNIT = evalq.tasks.rows.run_unit.name
AGGREGATE_ROW = evalq.tasks.rows.aggregate_row.name
_CREATE_TLS_CONTEXT = ssl.create_default_context


@functools.cache
def _tls_context_once(*args: Any, **kwargs: Any) -> ssl.SSLContext:
    """ssl.create_default_context, each distinct call made once per test process: google-genai
    loads the CA bundle into three new TLS contexts for every client it makes (about 0.1 s of
    CPU), and a runner's judges, uploader and token counter are made anew for each runner, all
    for a fake server spoken to in plain HTTP. They were most of these tests' time."""
    return _CREATE_TLS_CONTEXT(*args, **kwargs)


@dataclass(frozen=True)
class Call:
    """One task message: what a worker would be handed (`retries` as in its request)."""

    task: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    retries: int = 0
    chord: int | None = None  # the index in TaskRunner.chords of the chord it is a part of
    part: int = 0  # its place in that chord's header


@dataclass
class Outcome:
    """How one call ended: "done" (returned `value`), "retry" (asked to run `retry` after
    `countdown` seconds) or "failed" (raised `error`, which a worker would record)."""

    call: Call
    state: Literal["done", "retry", "failed"]
    value: Any = None
    countdown: float | None = None
    retry: Call | None = None
    error: BaseException | None = None


@dataclass
class Chord:
    """A chord prepare_row sent: its parts, its callback, and what has come back so far."""

    header: list[Call]
    body: Call
    ended: dict[int, Outcome] = field(default_factory=dict)  # by part; the first end counts
    fired: bool = False  # its callback was queued

    @property
    def failed(self) -> bool:
        return any(o.state == "failed" for o in self.ended.values())


class InProcessScheduler:
    """The scheduler (evalq.worker.celery_app.scheduling) the runner hands the tasks: a chord or a
    sent task is recorded and queued instead of published. A retry is Celery's own: every call runs
    under an eager request, for which Task.retry hands back its Retry instead of publishing it."""

    def __init__(self, runner: TaskRunner) -> None:
        self._runner = runner

    def chord(self, header: Sequence[Signature], body: Signature) -> None:
        self._runner._record_chord(list(header), body)

    def send(self, name: str, args: tuple[object, ...], countdown_s: float | None) -> None:
        self._runner.queue.append(Call(name, tuple(args)))  # its countdown dropped

    def retry(self, task: Task, **options: Any) -> Exception:
        again: Exception = task.retry(throw=False, **options)
        return again


def _call_of(signature: Any, chord: int | None = None, part: int = 0) -> Call:
    return Call(
        task=str(signature.task),
        args=tuple(signature.args),
        kwargs=dict(signature.kwargs),
        retries=int(signature.options.get("retries", 0)),
        chord=chord,
        part=part,
    )


class TaskRunner:
    """Runs the row tasks (and batch mode's) in-process; see the module docstring.

    Use as a context manager: it points the worker settings at `redis_url` (flushed first) and
    `gemini_url`, hands the tasks its scheduler, and undoes both on exit. `env` adds EVALQ_
    settings.
    """

    def __init__(self, redis_url: str, gemini_url: str, folder: Path, **env: str) -> None:
        self.redis_url = redis_url
        self.gemini_url = gemini_url
        self.folder = folder
        self.env = {"EVALQ_TRANSIENT_MAX_WAIT_S": "0.2", **env}
        self.queue: deque[Call] = deque()
        self.chords: list[Chord] = []
        self.outcomes: list[Outcome] = []
        self._patch = pytest.MonkeyPatch()
        self._scheduler: Scheduler | None = None  # the one handed back on exit
        self._names = itertools.count()
        self._client: Client | None = None

    # ---- set up and tear down ----

    def __enter__(self) -> TaskRunner:
        redis.Redis.from_url(self.redis_url).flushdb()
        for name in SECRET_ENV:
            self._patch.delenv(name, raising=False)
        self._patch.setenv("EVALQ_REDIS_URL", self.redis_url)
        self._patch.setenv("EVALQ_GEMINI_BASE_URL", self.gemini_url)
        for name, value in self.env.items():
            self._patch.setenv(name, value)
        self._patch.setattr(ssl, "create_default_context", _tls_context_once)
        get_app().loader.import_default_modules()  # as a worker starts: every task registered
        self._scheduler = use_scheduler(InProcessScheduler(self))
        # A worker process keeps one judge per model, made with the settings it first saw;
        # this runner's settings start with none.
        forget_judges()
        self._forget_runtime()
        return self

    def __exit__(self, *_: object) -> None:
        if self._scheduler is not None:
            use_scheduler(self._scheduler)
        self._patch.undo()
        forget_judges()
        self._forget_runtime()

    @staticmethod
    def _forget_runtime() -> None:
        get_settings.cache_clear()
        runtime.cache_clear()

    @property
    def client(self) -> Client:
        """The real client, built from the settings this runner set; what it sends is queued
        here (Celery's send_task is the one part of it replaced)."""
        if self._client is None:
            self._client = Client(get_settings())
            self._client.app = _QueueingApp(self)
        return self._client

    @property
    def store(self) -> Store:
        return store_of(self.client)

    # ---- what the client would publish ----

    def submit(self, metric: str, rows: Iterable[object], **options: Any) -> str:
        """Submit a job of these rows (written as JSON Lines); returns its id. Its prepare_row
        calls are queued."""
        path = write_rows(self.folder / f"rows-{next(self._names)}.jsonl", rows)
        return self.client.submit(metric, path, **options).job_id

    def submit_pointwise(self, text: str, rows: int = 1, samples: int = 1, **options: Any) -> str:
        """A pointwise job (the fluency template) of `rows` rows, r0, r1, …, row i responding
        "TEXT response i.": one judge call per row and sample, each its own unit, all answered
        by a script rule matching TEXT. `options` go to Client.submit (mode, use_cache, …)."""
        return self.submit(
            "pointwise",
            [{"id": f"r{i}", "response": f"{text} response {i}."} for i in range(rows)],
            options={"template": "fluency", "samples": samples},
            **options,
        )

    def _record_chord(self, header: list[Any], body: Any) -> None:
        index = len(self.chords)
        parts = [_call_of(s, index, part) for part, s in enumerate(header)]
        chord = Chord(header=parts, body=_call_of(body))
        self.chords.append(chord)
        self.queue.extend(chord.header)

    # ---- running ----

    @staticmethod
    def prepare(job_id: str, line: str, **kwargs: Any) -> Call:
        return Call(PREPARE_ROW, (job_id, line), kwargs)

    @staticmethod
    def unit(job_id: str, line: str, index: int, **kwargs: Any) -> Call:
        return Call(RUN_UNIT, (job_id, line, index), kwargs)

    @staticmethod
    def aggregate(job_id: str, line: str, parts: list[Any] | None = None, **kwargs: Any) -> Call:
        return Call(AGGREGATE_ROW, (parts or [], job_id, line), kwargs)

    def run(self, call: Call) -> Outcome:
        """Run one call now, as a worker would run the message (again, if it ran before)."""
        self._forget_runtime()  # a fresh worker view: no status read a moment ago
        task: Task = get_app().tasks[call.task]
        task.push_request(
            id=str(uuid.uuid4()),
            task=call.task,
            args=list(call.args),
            kwargs=dict(call.kwargs),
            retries=call.retries,
            is_eager=True,  # Task.retry then returns its Retry instead of publishing it
            called_directly=False,
            delivery_info={"is_eager": True},
        )
        try:
            outcome = Outcome(call, "done", value=task.run(*call.args, **call.kwargs))
        except Retry as retry:
            assert retry.sig is not None, f"{call.task} asked for a retry without a message"
            again = _call_of(retry.sig, call.chord, call.part)
            countdown = None if retry.when is None else float(retry.when)
            outcome = Outcome(call, "retry", countdown=countdown, retry=again)
        except Exception as exc:
            outcome = Outcome(call, "failed", error=exc)
        finally:
            task.pop_request()
        self.outcomes.append(outcome)
        if call.chord is not None and outcome.state != "retry":
            self._part_ended(self.chords[call.chord], outcome)
        return outcome

    def _part_ended(self, chord: Chord, outcome: Outcome) -> None:
        """As Celery's Redis backend: each part counts once (by task id and place), the
        callback is queued when every part has ended, once, and not at all when a part
        failed (the chord fails instead)."""
        if chord.fired:
            return  # a late duplicate
        chord.ended.setdefault(outcome.call.part, outcome)
        if len(chord.ended) == len(chord.header) and not chord.failed:
            chord.fired = True
            values = [chord.ended[part].value for part in range(len(chord.header))]
            body = chord.body
            self.queue.append(Call(body.task, (values, *body.args), body.kwargs))

    def next(self) -> Outcome:
        """Run the oldest queued call."""
        return self.run(self.queue.popleft())

    def next_settled(self) -> Outcome:
        """Run the oldest queued call; a poll of a batch still running is run again until the
        batch has ended (the fake server ends it on its own), as its countdown retries would.
        Any other retry, a task error's among them, is the test's to run."""
        outcome = self.next()

        def ended() -> bool:
            nonlocal outcome
            retry = outcome.retry
            if outcome.call.task != POLL_BATCH or retry is None or retry.kwargs.get("task_errors"):
                return True
            outcome = self.run(retry)
            return False

        wait_for(ended, 60, "the batch to end")
        return outcome

    def drain(self, limit: int = 1000) -> list[Outcome]:
        """Run queued calls, and the ones they queue, until none is left (retries are not
        queued: they are in the outcomes). `limit` stops a runaway loop."""
        ran: list[Outcome] = []
        while self.queue:
            assert len(ran) < limit, f"still {len(self.queue)} calls queued after {limit}"
            ran.append(self.next())
        return ran

    # ---- faults ----

    @contextmanager
    def redis_unreachable(self) -> Iterator[None]:
        """Calls run meanwhile find Redis out of reach: the worker settings point at a port
        nothing listens on. The runner's own client keeps the real one."""
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("EVALQ_REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
            self._forget_runtime()
            yield
        self._forget_runtime()


class _QueueingApp:
    """Stands in for the client's Celery app, which it uses only to publish."""

    def __init__(self, runner: TaskRunner) -> None:
        self._runner = runner

    def producer_or_acquire(self, producer: Any = None) -> AbstractContextManager[Any]:
        return nullcontext(producer)

    def send_task(self, name: str, args: Iterable[Any] = (), kwargs: Any = None, **_: Any) -> None:
        self._runner.queue.append(Call(name, tuple(args), dict(kwargs or {})))
