"""The one judge-error policy of a row's life, online and in batch mode, by the error's class
(evalq.core.errors): pause the job, retry after a delay (or hold the row for a later sweep), or
give up (the row fails, or the unit's verdict is unscored with why)."""

from __future__ import annotations

import logging
import random
import time

from evalq.core.errors import JobHalted, JudgeError, LimiterBusy, policy_of
from evalq.worker.lifecycle.modes import Mode, Online
from evalq.worker.lifecycle.outcomes import GaveUp, Held, Paused, RetryAfter
from evalq.worker.runtime import Runtime
from evalq.worker.settings import Settings

log = logging.getLogger(__name__)


def on_judge_error(
    rt: Runtime, job_id: str, exc: JudgeError, mode: Mode
) -> Paused | RetryAfter | Held | GaveUp:
    """What to do with a judge error, online or in a batch sweep (evalq.worker.lifecycle.modes):
    "pause" pauses the job; "countdown" (a 429, our limiter's next slot far off, a shared rubric
    being written) is a retry after the delay asked for while retries last, or holds the row in
    batch mode; anything else, and a countdown out of retries, gives up."""
    match policy_of(exc):
        case "pause":
            online = isinstance(mode, Online)
            _pause(rt, job_id, exc, "daily quota exhausted" if online else "paused in batch mode")
            return Paused()
        case "countdown":
            return _countdown(rt.settings, exc, mode) if isinstance(mode, Online) else Held()
        case _:  # "never", and "backoff" once the judge client's own attempts are spent
            return GaveUp(exc.message)


def _pause(rt: Runtime, job_id: str, exc: JudgeError, why: str) -> None:
    if isinstance(exc, JobHalted):
        return  # already paused where it was decided; pausing again could undo a resume
    if rt.store.pause(job_id, f"{why}: {exc.message}"):
        log.warning("job %s paused: %s", job_id, exc.message)


def _countdown(settings: Settings, exc: JudgeError, attempt: Online) -> RetryAfter | GaveUp:
    """A retry after the delay asked for (jittered), or giving up when retries are spent: too
    many of them, or EVALQ_RATE_LIMIT_MAX_TOTAL_S since the unit's first server 429."""
    if attempt.retries >= settings.rate_limit_max_retries:
        return GaveUp(_gave_up(settings, exc, attempt))
    first = attempt.first_429_at
    if first is None and not isinstance(exc, LimiterBusy):
        first = time.time()
    if first is not None and time.time() - first >= settings.rate_limit_max_total_s:
        return GaveUp(_gave_up(settings, exc, attempt))
    delay = min(exc.retry_after_s, settings.max_retry_delay_s) + random.uniform(0, 1)
    return RetryAfter(delay, first)


def _gave_up(settings: Settings, exc: JudgeError, attempt: Online) -> str:
    """Why a unit stopped retrying a rate limit, for its judge_error verdict."""
    first = attempt.first_429_at
    if first is not None and time.time() - first >= settings.rate_limit_max_total_s:
        return (
            f"still rate limited {time.time() - first:.0f} s after the first 429, over "
            f"EVALQ_RATE_LIMIT_MAX_TOTAL_S={settings.rate_limit_max_total_s:g}: {exc.message}"
        )
    return f"still rate limited after {attempt.retries} retries: {exc.message}"
