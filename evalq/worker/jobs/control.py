"""What the client side may do to jobs (store, start, resume, cancel, change turns or cap,
finish, archive), one interface over the Store so evalq.client never reaches the Store, its
keys or Redis (a contract in pyproject.toml)."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from evalq.core.models import JobConfig, JobSummary, RowInput, RowResult
from evalq.core.shared_cache import ClaimingKeyValue, KeyValue
from evalq.worker.batch.names import SUBMIT_BATCH, Send
from evalq.worker.dispatch.turns import SendRow, hand_out
from evalq.worker.jobs.resume_outcome import ResumeOutcome
from evalq.worker.lifecycle.job_end import finalize
from evalq.worker.settings import Settings
from evalq.worker.store import PRIORITIES, RowRef, Store, Transition, TurnState

if TYPE_CHECKING:
    from evalq.worker.archive.archive import Archive
    from evalq.worker.archive.record import JobRecord
    from evalq.worker.judges.limiter import Limit, RateLimiter

__all__ = [
    "PRIORITIES",
    "JobControl",
    "ResumeOutcome",
    "Send",
    "SendRow",
    "Transition",
    "TurnState",
]

log = logging.getLogger(__name__)


class JobControl:
    """Steering the jobs in one Redis (the one `settings` name), and the shared caches and
    limiter a client-side judge (`evalq rubrics`) uses as a worker would. The checks of a
    person's request (a cap with prices, a priority that exists) are the client's, made before
    it asks: what is done here is the same whoever asks. Tasks go out through what the caller
    gives: `send_row` for a row given a turn, `send_step` for batch mode's next step."""

    def __init__(self, store: Store, settings: Settings) -> None:
        self._store = store
        self._settings = settings

    @classmethod
    def from_settings(cls, settings: Settings) -> JobControl:
        return cls(Store.from_settings(settings), settings)

    # ---- what a request is checked against ----

    def config(self, job_id: str) -> JobConfig:
        """JobNotFound when Redis does not have the job."""
        return self._store.config(job_id)

    def status(self, job_id: str) -> str:
        return self._store.status(job_id)

    def budget(self, job_id: str) -> tuple[int, int | None]:
        """What the job has spent and its cap, in nanodollars (None: no cap)."""
        return self._store.budget(job_id)

    # ---- a job's life ----

    def create(
        self,
        config: JobConfig,
        rows: list[RowInput],
        rejected: Sequence[RowResult],
        send_row: SendRow,
        send_step: Send,
    ) -> None:
        """Store the job with its rows (`rejected`: lines refused at load, counted now) and
        start it: its rows wait for turns (evalq.worker.dispatch.turns) and the free ones go out
        now; in batch mode one batch submission; a job with no row to run finishes at once."""
        self._store.create_job(config, rows, rejected)
        if not rows:
            finalize(self._store, config.job_id)
        elif config.mode == "batch":
            send_step(SUBMIT_BATCH, (config.job_id,), None)
        else:
            hand_out(self._store, self._settings, send_row)

    def finish(self, job_id: str) -> JobSummary:
        """Finish a job every row of which is counted (the worker that counted the last one
        may have died before it could) and return its summary; the summary so far while rows
        are missing (evalq.worker.lifecycle.job_end.finalize)."""
        return finalize(self._store, job_id)

    def resume(
        self, job_id: str, cap_nanos: int | None, send_row: SendRow, send_step: Send
    ) -> ResumeOutcome:
        """Run the job again under spend cap `cap_nanos` with the rows not yet counted. A
        paused or cancelled job's rows all go back in line for turns; a running job keeps
        the rows it has in flight or waiting, and only rows that lost their place go back;
        batch mode's rows wait on their batches, polled again (never sent twice)."""
        store = self._store
        config = store.config(job_id)
        store.set_budget(job_id, cap_nanos)
        holding, waiting = store.turn_places(job_id)  # before the rows not done: see _lost
        store.clear_fatal(job_id)  # before running: a late refusal must not meet the old counts
        moved = store.transition(job_id, "running")
        if not moved.changed:  # finished meanwhile (the only status that can't run again)
            return ResumeOutcome(job_id, moved.before, finished=True)
        pending = store.not_done(job_id)
        if not pending:
            finalize(store, job_id)
            return ResumeOutcome(job_id, moved.before, finished=True)
        if config.mode == "batch":
            from evalq.worker.batch.flow import reattach

            store.touch(job_id, *pending)
            if reattach(store, self._settings, send_step, job_id, time.time(), force=True):
                return ResumeOutcome(job_id, moved.before, in_batches=len(pending))
        if moved.before == "running":
            return self._lost(config, pending, holding | waiting, send_row)
        store.touch(job_id, *pending)
        store.wait_for_turns(job_id, pending, config.created_at)
        hand_out(store, self._settings, send_row)
        return ResumeOutcome(job_id, moved.before, requeued=len(pending))

    def _lost(
        self, config: JobConfig, pending: list[str], placed: set[str], send_row: SendRow
    ) -> ResumeOutcome:
        """A running job: its rows holding a turn are in flight (the watchdog re-drives one
        that stalls) and its waiting rows get turns as others end, so sending them again
        would only run them twice. A row in neither place was lost; only those go back in
        line. The places were read before the rows not done, so a row that ended between the
        reads is not done and never taken for lost."""
        job_id = config.job_id
        lost = [row for row in pending if row not in placed]
        if lost:
            self._store.touch(job_id, *lost)
            self._store.rejoin_line(job_id, lost, config.created_at)
            hand_out(self._store, self._settings, send_row)
        left = len(pending) - len(lost)
        return ResumeOutcome(job_id, "running", requeued=len(lost), lost=len(lost), left=left)

    def cancel(self, job_id: str) -> Transition:
        """Cancel unless the job is already finished or cancelled; says which it found. An
        online job notes the calls it left open; a batch job's batches are cancelled on the
        server now (a poll that finds the job cancelled does it too, so a failure here only
        delays it)."""
        store = self._store
        config = store.config(job_id)
        transition = store.transition(job_id, "cancelled")
        if transition.changed:
            store.settle_expiry(job_id)  # ended: every key of it expires together
            if config.mode == "online":
                store.note_open_calls(job_id, self._open_calls(job_id, config.metric))
        if config.mode == "batch" and transition.changed:
            self._cancel_batches(config)
        return transition

    def _open_calls(self, job_id: str, metric: str) -> int:
        """Units of the rows holding a turn that have no verdict, and one call for each such
        row not yet planned (a plan's calls, a rubric or a candidate, go one at a time): the
        calls sent and not answered, at most (the window keeps these rows few, so reading each
        one's plan is cheap)."""
        from evalq.core.metric import get_metric

        plan_model = get_metric(metric).plan_model
        count = 0
        for line in self._store.holding_turns(job_id):
            row = RowRef(job_id, line)
            plan = self._store.row_plan(row, plan_model)
            if plan is None:
                count += 1
            else:
                count += max(0, len(plan.units) - len(self._store.verdicts(row)))
        return count

    def _cancel_batches(self, config: JobConfig) -> None:
        from evalq.worker.batch.service import backend_for, cancel_all

        try:
            backend = backend_for(self._settings, config.vertex_batch_prefix)
            cancel_all(backend, self._store, config.job_id)
        except Exception as exc:  # the API out of reach: the next poll cancels them
            log.warning(
                "job %s: cancelling its batches failed (%s); a poll will", config.job_id, exc
            )

    def set_turns(
        self,
        job_id: str,
        send_row: SendRow,
        *,
        priority: str | None = None,
        max_in_flight: int | None = None,
    ) -> TurnState:
        """Change a job's priority or its cap on rows in flight (0 lifts the cap), running or
        not; turns freed by a wider cap go out now. Returns the job's turns after it."""
        self._store.config(job_id)  # raises JobNotFound
        self._store.set_turns(job_id, priority=priority, max_in_flight=max_in_flight)
        hand_out(self._store, self._settings, send_row)
        return self._store.turn_state(job_id)

    def archive(self, job_id: str, archive: Archive, written_by: str) -> JobRecord:
        """Write the job as Redis has it to `archive` (replacing any earlier record) and note
        the write, as a worker's archiver does; returns what was written."""
        from evalq.worker.jobs.archiving import collect

        due = self._store.archive_pending_since(job_id)
        record = collect(self._store, job_id, written_by=written_by)
        archive.write(record)
        self._store.archive_written(job_id, due, time.time())
        return record

    # ---- what a client-side judge shares with the workers ----

    def rubrics(self) -> ClaimingKeyValue:
        """The shared rubric cache, by rubric digest, with the claims workers take on it."""
        return self._store.rubrics()

    def call_replies(self) -> KeyValue:
        """The judge-call cache, by call digest."""
        return self._store.call_replies()

    def rate_limiter(self, limits: dict[str, Limit], max_wait_s: float) -> RateLimiter:
        """The global rate limiter every worker's calls go through."""
        from evalq.worker.judges.limiter import RateLimiter

        return RateLimiter(self._store, limits, max_wait_s=max_wait_s)
