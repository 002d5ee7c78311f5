"""One error hierarchy for evalq; each judge error carries its retry policy and unscored reason.

Tasks never decide retry behaviour by inspecting messages: they read ``retry`` off the class
(dramatiq-style), so a new error kind is handled everywhere by declaring it once here.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from evalq.models import UnscoredReason

RetryPolicy = Literal["backoff", "countdown", "pause", "never"]


class EvalqError(Exception):
    """Base of every error evalq raises on purpose."""


class DatasetError(EvalqError):
    """The file is not a dataset at all; nothing is enqueued."""


class InputError(EvalqError):
    """One row's input is bad; the row fails with reason input_error, the job goes on."""

    def __init__(self, row_id: str, field: str, message: str) -> None:
        self.row_id = row_id
        self.field = field
        self.message = message
        super().__init__(f"row {row_id}: field {field!r}: {message}")


class MissingField(InputError):
    """A row has no value for a field the metric needs. When no row of a dataset has it, the
    dataset is refused as a whole (a wrong file or a renamed column), not failed row by row."""


class JobNotFound(EvalqError):
    """No job with that id in Redis (never created, or expired)."""


class JobGone(JobNotFound):
    """A job that was there vanished while we watched it: Redis lost its data."""


class RedisUnavailable(EvalqError):
    """Redis could not be reached for longer than the client was willing to wait."""


class JudgeError(EvalqError):
    """A judge call did not produce a usable verdict."""

    retry: ClassVar[RetryPolicy] = "never"
    reason: ClassVar[UnscoredReason] = "judge_error"

    def __init__(self, message: str, raw: str | None = None) -> None:
        self.message = message
        self.raw = raw
        self.attempts = 1  # HTTP attempts spent before giving up (set by the judge client)
        self.limiter_wait_s = 0.0  # time spent waiting on the global rate limiter
        # Tokens billed for a reply that still was no verdict (one cut off, say), so they count.
        self.prompt_tokens = 0
        self.output_tokens = 0
        self.thought_tokens = 0
        super().__init__(message)


class TransientJudgeError(JudgeError):
    """5xx, timeouts, dropped connections: retried in-process with jittered backoff."""

    retry = "backoff"


class RateLimited(JudgeError):
    """429 per-minute quota (or our own limiter saying wait long): retried later as a Celery
    countdown, never by sleeping a worker."""

    retry = "countdown"

    def __init__(self, message: str, retry_after_s: float, raw: str | None = None) -> None:
        self.retry_after_s = retry_after_s
        super().__init__(message, raw)


class LimiterBusy(RateLimited):
    """Our own global limiter's next slot is far off: come back later, no request was made."""


class QuotaExhausted(JudgeError):
    """A per-day quota is used up: retrying today is pointless, so the job pauses until resumed."""

    retry = "pause"
    reason = "quota_exhausted"


class JobHalted(JudgeError):
    """The same refusal came back so often that every call would get it (bad key, unknown
    model, a budget the model refuses): the job pauses with that reason, its remaining units
    left for `evalq resume`."""

    retry = "pause"


class Blocked(JudgeError):
    """The reply was withheld by safety filters (prompt or candidate)."""

    reason = "blocked"


class UnparseableReply(JudgeError):
    """The judge answered, but not in a form we can read; the raw reply is kept."""

    reason = "parse_error"


class TruncatedReply(JudgeError):
    """The reply ended for a reason other than a normal stop (MAX_TOKENS, empty after thinking):
    whatever part of it parses is not a verdict."""

    reason = "truncated"


class BadRequest(JudgeError):
    """The server refused the request (4xx other than 429): a bug or bad input, not retried."""


class BudgetSpent(JobHalted):
    """The job's spend reached its --max-cost-usd: it pauses instead of making the call, and
    `evalq resume JOB --max-cost-usd Y` continues it with a new cap."""
