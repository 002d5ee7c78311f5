"""The client side's two ways into Redis: evalq.worker.jobs.control steers a job and
evalq.worker.jobs.reads reads it back, against a real Redis (a scratch database no worker watches),
with the tasks they would send recorded instead of published. And the contract that keeps the client
side on them."""

from __future__ import annotations

import time
import tomllib
import uuid
from pathlib import Path

import pytest

from evalq.core.errors import JobNotFound
from evalq.core.models import JobConfig, MediaRef, RowInput, Verdict
from evalq.core.verdicts import failed_row
from evalq.metrics.pointwise.metric import PointwisePlan, RatingUnit
from evalq.worker.jobs.control import JobControl
from evalq.worker.jobs.reads import JobReads
from evalq.worker.settings import Settings
from evalq.worker.store import RowRef, Store
from evalq.worker.store.unit_writes import UnitWrites
from tests.conftest import ROOT

WINDOW = 2  # turns in all: the third row waits


class Sent:
    """What the interfaces would publish: rows given a turn, batch mode's steps."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str]] = []
        self.steps: list[tuple[str, tuple[object, ...]]] = []

    def row(self, job_id: str, line: str) -> None:
        self.rows.append((job_id, line))

    def step(self, name: str, args: tuple[object, ...], countdown_s: float | None) -> None:
        self.steps.append((name, args))


@pytest.fixture
def both(scratch_url: str) -> tuple[JobControl, JobReads]:
    settings = Settings(redis_url=scratch_url, turn_window=WINDOW)
    store = Store.from_settings(settings)
    return JobControl(store, settings), JobReads(store)


def create(
    control: JobControl, sent: Sent, rows: int, *, rejected: int = 1, metric: str = "gecko-image"
) -> str:
    """A job of `rows` good rows (lines 1..rows) and `rejected` lines refused at load after
    them, stored and started as the client does it."""
    job_id = uuid.uuid4().hex[:12]
    config = JobConfig(
        job_id=job_id,
        metric=metric,
        judge_model="m",
        dataset="d",
        rows_total=rows + rejected,
        created_at=time.time(),
    )
    image = {"image": MediaRef(kind="path", value="/x.png")}
    good = [RowInput(id=f"r{i}", line=1 + i, prompt="p", media=image) for i in range(rows)]
    bad = [
        failed_row(f"bad{i}", rows + 1 + i, "", "input_error", "bad input") for i in range(rejected)
    ]
    control.create(config, good, bad, sent.row, sent.step)
    return job_id


def test_a_job_started_through_control_reads_back_through_reads(
    both: tuple[JobControl, JobReads],
) -> None:
    control, reads = both
    sent = Sent()
    job = create(control, sent, 3)
    assert sent.rows == [(job, "1"), (job, "2")] and sent.steps == []  # the window's two
    assert reads.exists(job) and reads.status(job) == "running"
    assert reads.row_keys(job) == ["1", "2", "3", "4"]
    assert [row.id for row in reads.rows(job)] == ["r0", "r1", "r2"]  # line 4 has no row
    with pytest.raises(JobNotFound):
        reads.row(job, "4")
    assert [r.id for r in reads.results(job)] == ["bad0"]  # refused at load, counted now
    counters, listed = reads.progress(job)
    assert (counters.rows_done, listed) == (1, 4)
    turns = reads.turn_state(job)
    assert (turns.holding, turns.waiting) == (2, 1)
    assert job in reads.job_ids(limit=0) and set(reads.configs([job])) == {job}


def test_a_job_with_no_row_to_run_is_finished_at_once(both: tuple[JobControl, JobReads]) -> None:
    control, reads = both
    sent = Sent()
    job = create(control, sent, 0, rejected=2)
    assert sent.rows == [] and reads.status(job) == "finished"
    assert reads.summary(job).rows_done == 2


def test_cancel_then_resume_through_control(both: tuple[JobControl, JobReads]) -> None:
    control, reads = both
    sent = Sent()
    job = create(control, sent, 3)
    cancelled = control.cancel(job)
    assert (cancelled.changed, cancelled.before) == (True, "running")
    assert reads.status(job) == "cancelled"
    assert reads.archive_state(job).due is not None  # an ended job is due for the archive
    assert not control.cancel(job).changed  # once is enough
    sent.rows.clear()
    outcome = control.resume(job, None, sent.row, sent.step)
    assert (outcome.before, outcome.requeued, outcome.finished) == ("cancelled", 3, False)
    assert reads.status(job) == "running" and len(sent.rows) == WINDOW


def test_turns_changed_through_control(both: tuple[JobControl, JobReads]) -> None:
    control, reads = both
    job = create(control, Sent(), 3)
    state = control.set_turns(job, Sent().row, priority="high", max_in_flight=1)
    assert (state.priority, state.max_in_flight) == ("high", 1)
    assert reads.turn_state(job) == state
    with pytest.raises(JobNotFound):
        control.set_turns("0" * 12, Sent().row, priority="low")


def test_the_client_side_may_reach_redis_only_through_the_two_interfaces() -> None:
    """The contract lint-imports checks (tests/unit/test_layers.py runs it) stays as strict:
    the client side importing the Store, the key names or redis directly is a broken build."""
    config = tomllib.loads(Path(ROOT, "pyproject.toml").read_text())["tool"]["importlinter"]
    contract = next(c for c in config["contracts"] if c["id"] == "client-through-interfaces")
    assert contract["type"] == "forbidden"
    assert {"evalq.client", "evalq.__main__"} <= set(contract["source_modules"])
    assert {"evalq.worker.store", "redis"} <= set(contract["forbidden_modules"])


def test_a_cancel_counts_the_calls_its_rows_in_flight_may_still_have_open(
    both: tuple[JobControl, JobReads], store: Store
) -> None:
    """Row 1 is planned with three ratings, one answered: two open. Row 2 holds its turn
    unplanned: its planning call, one. Row 3 waits for a turn: none."""
    control, reads = both
    job = create(control, Sent(), 3, rejected=0, metric="pointwise")
    ratings = [RatingUnit(index=i, judge="a", sample=i) for i in range(3)]
    plan = PointwisePlan(
        units=ratings, template="fluency", template_version="v", judges=["a"], samples=3
    )
    store.keep_row_plan(RowRef(job, "1"), plan)
    store.record_unit(RowRef(job, "1"), Verdict(index=0, status="ok", result=4), UnitWrites())
    control.cancel(job)
    assert reads.summary(job).calls_open_at_cancel == 3
