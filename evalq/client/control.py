"""Steering a stored job: resume a paused or interrupted one (under a new spend cap if need
be), cancel one, and cancel its batches on the server, change its turns."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from evalq.client.job_ids import check_job_id
from evalq.client.submit import Sender, check_cap, check_turns, models_by_role, row_sender, send
from evalq.core.errors import EvalqError
from evalq.core.metric import get_metric
from evalq.core.pricing import job_prices, nanos, usd
from worker.batch.flow import reattach
from worker.batch.service import backend_for as batch_backend
from worker.batch.service import cancel_all as cancel_batches
from worker.jobs import finalize
from worker.settings import Settings
from worker.store import Store, Transition, TurnState
from worker.turns import hand_out

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ResumeOutcome:
    """What a resume did, so it is never reported as more than it was. `before`: the status
    it found. `requeued`: rows put back in line for turns (sent as turns free up); `lost`: of
    those, rows of a running job that had neither a turn nor a place in line. `left`: rows of
    a running job left as they were (holding a turn, so in the broker or running, or waiting
    for one). `in_batches`: batch mode's rows not yet scored, whose batches are polled again
    (never sent again). `finished`: there was nothing to resume, the job is finished (it was,
    or every row of it was counted already and the resume finished it)."""

    job_id: str
    before: str
    requeued: int = 0
    lost: int = 0
    left: int = 0
    in_batches: int = 0
    finished: bool = False

    def describe(self) -> str:
        job = f"job {self.job_id}"
        if self.finished:
            if self.before == "finished":
                return f"{job} is finished: nothing to resume"
            return f"{job} was {self.before} with every row done: finished now, nothing to resume"
        if self.in_batches:
            return (
                f"{job} was {self.before}: {self.in_batches} rows wait on its batches, "
                "which are polled again (never sent twice)"
            )
        if self.before == "running":
            lost = f"{self.lost} rows that were lost (neither in flight nor waiting) re-sent"
            return f"{job} is running: {self.left} rows in flight or waiting left as they are, " + (
                lost if self.lost else "0 rows re-sent (none was lost)"
            )
        return f"{job} was {self.before}: {self.requeued} rows back in line"


def resume(
    store: Store, settings: Settings, app: Sender, job_id: str, max_cost_usd: float | None
) -> int:
    """How many rows resume_outcome put back in line (0 for a finished job)."""
    outcome = resume_outcome(store, settings, app, job_id, max_cost_usd)
    return outcome.requeued or outcome.in_batches


def resume_outcome(
    store: Store, settings: Settings, app: Sender, job_id: str, max_cost_usd: float | None
) -> ResumeOutcome:
    """Continue a paused, stopped or interrupted job with the rows not yet counted, and say
    what that took. A paused or cancelled job's rows all go back in line for turns
    (worker.turns); a running job keeps the rows it has in flight or waiting, and only rows
    that lost their place go back in line. Stored rubrics, verdicts and cached calls are
    reused. `max_cost_usd` sets a new spend cap (the total, spend so far included); a job whose
    spend already reached its cap needs one."""
    config = store.config(check_job_id(job_id))  # raises JobNotFound
    if store.status(job_id) == "finished":
        return ResumeOutcome(job_id, "finished", finished=True)
    spent, cap = store.budget(job_id)
    if max_cost_usd is not None:
        table = job_prices(config.prices)
        judges = config.judge_models or [config.judge_model]
        check_cap(max_cost_usd, table, models_by_role(judges, config.options, judges[0]))
        if nanos(max_cost_usd) <= spent:
            raise EvalqError(
                f"job {job_id} has already spent ${usd(spent):.4f}: a cap of "
                f"${max_cost_usd:g} would pause it again at once; give a larger "
                "--max-cost-usd (the total, spend so far included)"
            )
        cap = nanos(max_cost_usd)
    elif cap is not None and spent >= cap:
        raise EvalqError(
            f"job {job_id} has spent ${usd(spent):.4f}, its cap of ${usd(cap):.4f} "
            "(--max-cost-usd): resume it with a larger cap, "
            f"`evalq resume {job_id} --max-cost-usd Y`"
        )
    store.set_budget(job_id, cap)
    holding, waiting = store.turn_places(job_id)  # before the rows not done: see _running
    store.clear_fatal(job_id)  # before running: a late refusal must not meet the old counts
    moved = store.transition(job_id, "running")
    if not moved.changed:  # finished meanwhile (the only status that can't run again)
        return ResumeOutcome(job_id, moved.before, finished=True)

    def send_step(name: str, args: tuple[object, ...], countdown_s: float | None) -> None:
        send(app, name, args, countdown_s)

    pending = store.not_done(job_id)
    if not pending:
        finalize(store, job_id)
        return ResumeOutcome(job_id, moved.before, finished=True)
    if config.mode == "batch":
        store.touch(job_id, *pending)
        if reattach(store, settings, send_step, job_id, time.time(), force=True):
            return ResumeOutcome(job_id, moved.before, in_batches=len(pending))
    if moved.before == "running":
        return _running(store, settings, app, config.created_at, job_id, pending, holding | waiting)
    store.touch(job_id, *pending)
    store.wait_for_turns(job_id, pending, config.created_at)
    hand_out(store, settings, row_sender(app))
    return ResumeOutcome(job_id, moved.before, requeued=len(pending))


def _running(
    store: Store,
    settings: Settings,
    app: Sender,
    created_at: float,
    job_id: str,
    pending: list[str],
    placed: set[str],
) -> ResumeOutcome:
    """A running job: its rows holding a turn are in flight (the watchdog re-drives one that
    stalls) and its waiting rows get turns as others end, so sending them again would only
    run them twice. A row in neither place was lost; only those go back in line. The places
    were read before the rows not done, so a row that ended between the reads is not done
    and never taken for lost."""
    lost = [row for row in pending if row not in placed]
    if lost:
        store.touch(job_id, *lost)
        store.rejoin_line(job_id, lost, created_at)
        hand_out(store, settings, row_sender(app))
    left = len(pending) - len(lost)
    return ResumeOutcome(job_id, "running", requeued=len(lost), lost=len(lost), left=left)


def try_cancel(store: Store, settings: Settings, job_id: str) -> Transition:
    """Cancel unless the job is already finished or cancelled; says which it found."""
    config = store.config(check_job_id(job_id))
    transition = store.transition(job_id, "cancelled")
    if transition.changed:
        store.settle_expiry(job_id)  # ended: every key of it expires together
        if config.mode == "online":
            store.note_open_calls(job_id, open_calls(store, job_id, config.metric))
    if config.mode == "batch" and transition.changed:
        _cancel_batches(store, settings, job_id)
    return transition


def open_calls(store: Store, job_id: str, metric: str) -> int:
    """Units of the rows holding a turn that have no verdict: the calls sent and not answered
    (the window keeps these rows few, so reading each one's plan is cheap)."""
    plan_model = get_metric(metric).plan_model
    count = 0
    for line in store.holding_turns(job_id):
        plan = store.row_plan(job_id, line, plan_model)
        if plan is not None:
            count += max(0, len(plan.units) - len(store.verdicts(job_id, line)))
    return count


def _cancel_batches(store: Store, settings: Settings, job_id: str) -> None:
    """Cancel the job's batches on the server now; a poll that finds the job cancelled
    does the same, so a failure here only delays it."""
    try:
        prefix = store.config(job_id).vertex_batch_prefix
        cancel_batches(batch_backend(settings, prefix), store, job_id)
    except Exception as exc:  # the API out of reach: the next poll cancels them
        log.warning("job %s: cancelling its batches failed (%s); a poll will", job_id, exc)


def set_turns(
    store: Store,
    settings: Settings,
    app: Sender,
    job_id: str,
    *,
    priority: str | None = None,
    max_in_flight: int | None = None,
) -> TurnState:
    """Change a job's priority or its cap on rows in flight (0 lifts the cap), running or not;
    turns freed by a wider cap go out now. Returns the job's turns as they are after it."""
    check_job_id(job_id)
    store.config(job_id)  # raises JobNotFound
    check_turns(priority or "normal", max_in_flight or None)
    store.set_turns(job_id, priority=priority, max_in_flight=max_in_flight)
    hand_out(store, settings, row_sender(app))
    return store.turn_state(job_id)
