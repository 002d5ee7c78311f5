"""The gate before each judge call (evalq.worker.judges.budget; reserve_call.lua, release_calls.lua)
on a real Redis: a cap's reservations are atomic however many threads race for them, settle once,
and a dead worker's reservation frees itself; a cancelled or paused job admits no call."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from devtools.local import wait_for
from evalq.core.errors import BudgetSpent, CapBusy, JobHalted, policy_of
from evalq.core.judge import JudgeReply, JudgeRequest, MediaPart
from evalq.core.pricing import DEFAULT_PRICES, Usage, call_cost_nanos
from evalq.worker.judges.accounting import AccountingJudge
from evalq.worker.judges.budget import BudgetGuard, estimated_cost_nanos, settle
from evalq.worker.store import RowRef, Store, keys
from evalq.worker.store.unit_writes import UnitWrites
from tests.support.scratch import plant_job

HOUR_S = 3600.0


def member(estimate: int) -> str:
    return f"{uuid.uuid4().hex}:{estimate}"


def capped_job(store: Store, cap_nanos: int | None) -> str:
    job = plant_job(store, 1)
    store.set_budget(job, cap_nanos)
    return job


def test_threads_racing_for_one_cap_never_reserve_past_it(store: Store) -> None:
    cap, estimate, threads, tries = 1_000, 30, 32, 10
    job = capped_job(store, cap)
    start = threading.Barrier(threads)

    def race(_: int) -> list[str]:
        start.wait()  # all threads reserve together
        won = []
        for _ in range(tries):
            mine = member(estimate)
            if store.admit_call(job, mine, estimate, HOUR_S).verdict == "reserved":
                won.append(mine)
        return won

    with ThreadPoolExecutor(threads) as pool:
        granted = [m for won in pool.map(race, range(threads)) for m in won]
    assert len(granted) == cap // estimate  # every slot the cap has, and not one more
    assert store.reserved(job) == len(granted) * estimate <= cap
    assert store.r.zcard(keys.reservations(job)) == len(granted)


def test_settling_moves_a_reservation_into_the_spend(store: Store) -> None:
    job = capped_job(store, 100)
    first = member(60)
    assert store.admit_call(job, first, 60, HOUR_S).verdict == "reserved"
    assert store.admit_call(job, member(60), 60, HOUR_S).verdict == "busy"  # 60 + 60 > 100
    # The call cost 25: counted, then released (both count meanwhile, never neither).
    store.account(job, {}, Usage("judge", "m", 1, 10, 10, cost_nanos=25))
    assert store.release_calls(job, [first]) == 60
    assert store.release_calls(job, [first]) == 0  # settled once
    assert (store.budget(job)[0], store.reserved(job)) == (25, 0)
    second = member(75)
    seen = store.admit_call(job, second, 75, HOUR_S)
    assert (seen.verdict, seen.spent_nanos, seen.reserved_nanos) == ("reserved", 25, 75)
    assert store.admit_call(job, member(1), 1, HOUR_S).verdict == "busy"  # 25 + 75 + 1
    store.release_calls(job, [second])  # it made no call after all
    # Nothing in flight: a call the room left can not cover goes alone (the job's last)...
    last = member(200)
    assert store.admit_call(job, last, 200, HOUR_S).verdict == "reserved"
    store.account(job, {}, Usage("judge", "m", 1, 10, 10, cost_nanos=90))
    store.release_calls(job, [last])
    # ...and once the spend has reached the cap no call starts.
    seen = store.admit_call(job, member(1), 1, HOUR_S)
    assert (seen.verdict, seen.spent_nanos, seen.reserved_nanos) == ("over", 115, 0)


def test_a_dead_workers_reservation_frees_itself(store: Store) -> None:
    job = capped_job(store, 100)
    # A reservation held for a task's lifetime blocks the cap; one whose worker died (never
    # settled) expires and is freed by the next reserve.
    alive = member(50)
    assert store.admit_call(job, alive, 50, HOUR_S).verdict == "reserved"
    dead = member(50)
    assert store.admit_call(job, dead, 50, 0.2).verdict == "reserved"
    assert store.admit_call(job, member(50), 50, HOUR_S).verdict == "busy"
    later = member(50)
    wait_for(
        lambda: store.admit_call(job, later, 50, HOUR_S).verdict == "reserved",
        30,
        "the dead worker's reservation to expire",
    )
    assert store.reserved(job) == 100
    assert set(store.r.zrange(keys.reservations(job), 0, -1)) == {alive, later}
    assert store.release_calls(job, [dead]) == 0  # expired: not taken off twice
    assert store.reserved(job) == 100


def test_a_job_without_a_cap_reserves_nothing(store: Store) -> None:
    job = capped_job(store, None)
    seen = store.admit_call(job, member(10**9), 10**9, HOUR_S)
    assert (seen.verdict, seen.cap_nanos, seen.reserved_nanos) == ("go", None, 0)
    assert store.reserved(job) == 0 and not store.r.exists(keys.reservations(job))


@pytest.mark.parametrize("status", ["cancelled", "paused"])
def test_an_idle_job_admits_no_call(store: Store, status: str) -> None:
    job = capped_job(store, 100)
    assert store.transition(job, status, reason="test").changed
    seen = store.admit_call(job, member(1), 1, HOUR_S)
    assert (seen.verdict, seen.status) == ("idle", status)
    assert store.reserved(job) == 0


@pytest.mark.parametrize("cap", [None, 10**9])
def test_calls_let_through_are_counted_and_a_cancel_freezes_the_count(
    store: Store, cap: int | None
) -> None:
    job = capped_job(store, cap)
    for _ in range(3):
        assert store.admit_call(job, member(1), 1, HOUR_S).verdict in ("go", "reserved")
    assert store.transition(job, "cancelled").changed
    assert store.admit_call(job, member(1), 1, HOUR_S).verdict == "idle"
    assert store.counters(job).calls_admitted == 3


def test_a_gone_job_says_so(store: Store) -> None:
    assert store.admit_call("nosuchjob", member(1), 1, HOUR_S).verdict == "gone"


class InnermostJudge:
    """An innermost judge that counts the calls that reach it."""

    model = "gemini-2.5-flash"

    def __init__(self) -> None:
        self.calls = 0

    def generate(self, request: JudgeRequest) -> JudgeReply:
        self.calls += 1
        return JudgeReply("ok", self.model, None, 10, 1, "STOP")


def guard(store: Store, job: str, held: list[str]) -> tuple[BudgetGuard, InnermostJudge]:
    inner = InnermostJudge()
    layer = BudgetGuard(
        inner,
        store,
        job,
        prices=DEFAULT_PRICES,
        output_tokens=100,
        hold_s=HOUR_S,
        held=held,
    )
    return layer, inner


def test_the_guard_stops_a_cancelled_jobs_call_before_the_api(store: Store) -> None:
    job = capped_job(store, None)
    held: list[str] = []
    layer, inner = guard(store, job, held)
    layer.generate(JudgeRequest("p"))
    assert inner.calls == 1 and held == []  # no cap: nothing to settle
    store.transition(job, "cancelled")
    with pytest.raises(JobHalted, match="job cancelled: no new call") as refused:
        layer.generate(JudgeRequest("p"))
    assert not isinstance(refused.value, BudgetSpent)
    assert refused.value.cost.attempts == 0 and inner.calls == 1


def test_the_guard_holds_a_call_the_cap_has_no_room_for_and_pauses_a_spent_job(
    store: Store,
) -> None:
    request = JudgeRequest("p" * 400, max_output_tokens=100)
    estimate = estimated_cost_nanos(request, DEFAULT_PRICES["gemini-2.5-flash"], 100)
    job = capped_job(store, estimate * 2)
    held: list[str] = []
    layer, inner = guard(store, job, held)
    layer.generate(request)
    layer.generate(request)
    assert inner.calls == 2 and len(held) == 2 and store.reserved(job) == 2 * estimate
    with pytest.raises(CapBusy, match="reserved by calls in flight") as waits:
        layer.generate(request)  # comes back (a countdown) once the two settle
    assert policy_of(waits.value) == "countdown" and waits.value.cost.attempts == 0
    assert inner.calls == 2 and store.status(job) == "running"
    store.account(job, {}, Usage("judge", "m", 1, 10, 10, cost_nanos=2 * estimate))
    settle(store, job, held)
    assert held == [] and store.reserved(job) == 0
    with pytest.raises(BudgetSpent, match="cost cap reached"):
        layer.generate(request)
    assert inner.calls == 2 and store.status(job) == "paused"


def test_the_estimate_bounds_the_calls_bill() -> None:
    """The estimate prices the prompt and the whole output allowance, so a reply that uses its
    allowance in full costs no more than it (for a prompt its text and media estimate)."""
    price = DEFAULT_PRICES["gemini-2.5-flash"]
    image = MediaPart("image/png")  # size unknown here: one tile
    request = JudgeRequest("x" * 4000, system_instruction="s" * 400, media=(image,))
    estimate = estimated_cost_nanos(request, price, 512)
    assert estimate == call_cost_nanos(price, 1000 + 100 + 258, 512)
    assert estimated_cost_nanos(request, None, 512) == 0  # no price: nothing to reserve


def test_without_held_writes_a_call_is_settled_as_soon_as_it_is_counted(store: Store) -> None:
    """prepare_row's calls (a rubric, say) have no unit writes: the accounting layer counts
    each call at once, then releases its reservation."""
    job = capped_job(store, 10**9)
    held: list[str] = []
    layer, inner = guard(store, job, held)
    prices = {"gemini-2.5-flash": DEFAULT_PRICES["gemini-2.5-flash"]}
    judge = AccountingJudge(layer, store, job, prices=prices, held=held)
    judge.generate(JudgeRequest("p"))
    cost = call_cost_nanos(DEFAULT_PRICES["gemini-2.5-flash"], 10, 1)
    assert inner.calls == 1 and held == []
    assert (store.budget(job)[0], store.reserved(job)) == (cost, 0)


def test_a_units_reservations_settle_in_the_step_that_writes_its_spend(store: Store) -> None:
    job = capped_job(store, 10**9)
    writes = UnitWrites()
    for _ in range(2):  # a unit with two calls: both held until the unit's outcome is written
        reserved = member(1000)
        assert store.admit_call(job, reserved, 1000, HOUR_S).verdict == "reserved"
        writes.reservations.append(reserved)
        writes.spend({"judge_calls": 1}, Usage("judge", "m", 1, 10, 10, cost_nanos=300))
    assert store.reserved(job) == 2000
    recorded = store.record_unit(RowRef(job, "1"), None, writes)  # no verdict: a countdown, say
    assert (recorded.spent_nanos, store.reserved(job)) == (600, 0)
    assert store.r.zcard(keys.reservations(job)) == 0
    assert store.counters(job).judge_calls == 2


def test_a_call_that_read_the_cap_before_a_resume_raised_it_does_not_pause_the_job(
    store: Store,
) -> None:
    """A call counts its cost and reads the spend and the cap in one step, then pauses the job
    if the spend reached that cap. When `evalq cancel` and `evalq resume --max-cost-usd` land
    between those two steps, the resumed job runs under its new cap: the pause names the cap
    it was read under and is refused once that cap is gone."""
    from evalq.worker.judges.budget import pause_if_spent

    job = capped_job(store, 1_000)
    store.r.hset(keys.job(job), "spent_nanos", 1_900)  # the call's cost counted
    spent, cap = store.budget(job)  # and what it read back in the same step
    assert (spent, cap) == (1_900, 1_000)
    store.set_budget(job, 1_000_000)  # resume: a new cap, then running again
    pause_if_spent(store, job, spent, cap)  # what the call does next, with what it read
    assert store.status(job) == "running" and store.pause_reason(job) is None
    # Under the cap still in force, the same pause lands, and the cap lifted stops it too.
    assert store.pause(job, "cap", at_cap_nanos=1_000_000) and store.status(job) == "paused"
    store.transition(job, "running")
    store.set_budget(job, None)
    assert not store.pause(job, "cap", at_cap_nanos=1_000_000)
    assert store.status(job) == "running"
