"""Gecko tasks. Each is a few lines: load by id, call evalq.gecko with a judge, store, decide
retry. evaluate_row fans out one validate_question per question into a chord whose callback,
aggregate_row, scores the row. Header tasks never raise, so the callback always fires.

Retry policies come from the error classes: "countdown" (429, or our limiter's next slot is far)
becomes a Celery retry; "pause" (a spent daily quota) pauses the job, leaving its rows for
`evalq resume`; everything else is already an unscored verdict when it gets here.
"""

from __future__ import annotations

import logging
import random
import time
from typing import Any

from celery import Task, chord
from celery.exceptions import Retry

from evalq import gecko
from evalq.errors import InputError, JudgeError, QuotaExhausted, RateLimited
from evalq.models import RowInput, Rubric
from evalq.prompts import RUBRIC_TEMPLATE_VERSION
from worker.app import app
from worker.jobs import finish_row
from worker.runtime import Runtime, runtime

log = logging.getLogger(__name__)
_EARLY_CALLBACK_RETRIES = 10
_IDLE = ("cancelled", "paused")


def _countdown(task: Task, rt: Runtime, job_id: str, row_id: str, exc: RateLimited) -> Retry | None:
    """A Celery retry after the delay asked for (jittered), or None when retries are spent."""
    if task.request.retries >= rt.settings.rate_limit_max_retries:
        return None
    delay = min(exc.retry_after_s, rt.settings.max_retry_delay_s) + random.uniform(0, 1)
    rt.store.touch(job_id, row_id, at=time.time() + delay)  # waiting, not stalled
    return task.retry(countdown=delay, max_retries=rt.settings.rate_limit_max_retries, throw=False)


def _pause(rt: Runtime, job_id: str, exc: QuotaExhausted) -> None:
    if rt.store.pause(job_id, f"daily quota exhausted: {exc.message}"):
        log.warning("job %s paused: %s", job_id, exc.message)


def _fail_row(
    rt: Runtime, job_id: str, row: RowInput, exc: JudgeError | InputError, what: str
) -> None:
    reason = exc.reason if isinstance(exc, JudgeError) else "input_error"
    result = gecko.failed_row(row.id, row.line, row.prompt, reason, f"{what}: {exc}")
    finish_row(rt.store, job_id, result, rt.store.config(job_id).rows_total)


@app.task(bind=True, name="evalq.gecko.evaluate_row", max_retries=None)
def evaluate_row(self: Task, job_id: str, row_id: str) -> dict[str, Any]:
    rt = runtime()
    if rt.store.is_done(job_id, row_id) or rt.store.status(job_id) in _IDLE:
        return {"row": row_id, "skipped": True}
    rt.store.touch(job_id, row_id)
    config, row = rt.store.config(job_id), rt.store.row(job_id, row_id)
    try:
        rt.media.load(row.image, row.id, "image", rt.settings)  # a broken image costs no judge call
        rubric = _rubric(rt, config.judge_model, job_id, row, use_cache=config.use_cache)
    except InputError as exc:
        _fail_row(rt, job_id, row, exc, "bad input")
        return {"row": row_id, "status": "failed"}
    except QuotaExhausted as exc:
        _pause(rt, job_id, exc)
        return {"row": row_id, "paused": True}
    except RateLimited as exc:
        if (retry := _countdown(self, rt, job_id, row_id, exc)) is not None:
            raise retry from None
        _fail_row(rt, job_id, row, exc, "rubric generation still rate limited after retries")
        return {"row": row_id, "status": "failed"}
    except JudgeError as exc:
        _fail_row(rt, job_id, row, exc, "rubric generation failed")
        return {"row": row_id, "status": "failed"}
    header = [validate_question.s(job_id, row_id, i) for i in range(len(rubric.questions))]
    chord(header)(aggregate_row.s(job_id, row_id))
    return {"row": row_id, "questions": len(header)}


def _rubric(rt: Runtime, model: str, job_id: str, row: RowInput, *, use_cache: bool) -> Rubric:
    """The row's rubric: the one it already used (a redelivery must keep question indexes), its
    own questions, a cached one, or a new one."""
    if (stored := rt.store.row_rubric(job_id, row.id)) is not None:
        return stored
    if row.questions:
        rubric = gecko.dataset_rubric(row)
    elif use_cache and (
        cached := rt.store.cached_rubric(row.prompt, model, RUBRIC_TEMPLATE_VERSION)
    ):
        rt.store.incr(job_id, rubric_cache_hits=1)
        rubric = cached
    else:
        rubric, _ = gecko.generate_rubric(rt.judge(model, job_id, use_cache=use_cache), row.prompt)
        rt.store.cache_rubric(row.prompt, rubric)
    rt.store.save_row_rubric(job_id, row.id, rubric)
    return rubric


@app.task(bind=True, name="evalq.gecko.validate_question", max_retries=None)
def validate_question(self: Task, job_id: str, row_id: str, index: int) -> dict[str, Any]:
    rt = runtime()
    try:
        return _validate(self, rt, job_id, row_id, index)
    except Retry:
        raise
    except Exception as exc:  # a chord header must not fail, or the row's callback never runs
        log.exception("validate_question %s/%s/%s crashed", job_id, row_id, index)
        verdict = gecko.unscored(
            index, "judge_error", f"internal error: {type(exc).__name__}: {exc}"
        )
        try:
            rt.store.save_verdict(job_id, row_id, verdict)
        except Exception:
            log.exception("could not record the failure either")
        return {"index": index, "status": "unscored"}


def _validate(task: Task, rt: Runtime, job_id: str, row_id: str, index: int) -> dict[str, Any]:
    if (existing := rt.store.verdict(job_id, row_id, index)) is not None:
        return {"index": index, "status": existing.status, "duplicate": True}
    if rt.store.status(job_id) in _IDLE:
        return {"index": index, "skipped": True}  # left unanswered for `evalq resume`
    rubric, row = rt.store.row_rubric(job_id, row_id), rt.store.row(job_id, row_id)
    if rubric is None:
        raise RuntimeError(f"row {row_id} has no stored rubric")
    config = rt.store.config(job_id)
    try:
        media = rt.media.load(row.image, row.id, "image", rt.settings)
        judge = rt.judge(config.judge_model, job_id, use_cache=config.use_cache)
        verdict, _ = gecko.validate_question(judge, index, rubric.questions[index], media)
    except InputError as exc:
        verdict = gecko.unscored(index, "input_error", str(exc))
    except QuotaExhausted as exc:
        _pause(rt, job_id, exc)
        return {"index": index, "paused": True}
    except RateLimited as exc:
        if (retry := _countdown(task, rt, job_id, row_id, exc)) is not None:
            raise retry from None
        verdict = gecko.unscored(
            index, "judge_error", f"still rate limited after retries: {exc.message}"
        )
    rt.store.save_verdict(job_id, row_id, verdict)
    rt.store.touch(job_id, row_id)
    return {"index": index, "status": verdict.status}


@app.task(bind=True, name="evalq.gecko.aggregate_row", max_retries=None)
def aggregate_row(self: Task, _parts: list[Any], job_id: str, row_id: str) -> dict[str, Any]:
    rt = runtime()
    if rt.store.is_done(job_id, row_id):
        return {"row": row_id, "duplicate": True}
    rubric, row = rt.store.row_rubric(job_id, row_id), rt.store.row(job_id, row_id)
    if rubric is None:
        raise RuntimeError(f"row {row_id} has no stored rubric")
    verdicts = rt.store.verdicts(job_id, row_id)
    if len(verdicts) < len(rubric.questions):
        if rt.store.status(job_id) in _IDLE:
            return {"row": row_id, "left": "for resume"}  # not counted: resume finishes it
        # A redelivered header part can complete the chord early; wait for the stragglers a little.
        if self.request.retries < _EARLY_CALLBACK_RETRIES:
            raise self.retry(countdown=2, max_retries=_EARLY_CALLBACK_RETRIES)
    result = gecko.score_row(row, rubric, verdicts)
    finish_row(rt.store, job_id, result, rt.store.config(job_id).rows_total)
    return {"row": row_id, "status": result.status}
