"""One error hierarchy for evalq; each judge error declares its retry policy and unscored reason
once, on its class, so a new error kind is handled everywhere by declaring it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal, Self

from evalq.core.models import UnscoredReason

# backoff: retried in-process with jittered backoff by the judge client, then "never";
# countdown: the task runs again after `retry_after_s` (a Celery countdown);
# pause: the job pauses, its remaining rows left for `evalq resume`;
# never: an unscored verdict (in a unit) or a failed row (while preparing one).
RetryPolicy = Literal["backoff", "countdown", "pause", "never"]


@dataclass(frozen=True)
class CallCost:
    """What a judge call spent before it failed, so the job counts it: HTTP attempts, time on
    the global rate limiter, and tokens billed for a reply that still was no verdict."""

    attempts: int = 1
    limiter_wait_s: float = 0.0
    prompt_tokens: int = 0
    output_tokens: int = 0
    thought_tokens: int = 0
    cached_tokens: int = 0  # the part of prompt_tokens served from a context cache


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


class StoredPlanError(EvalqError):
    """A row's stored plan does not fit its metric's plan model (damaged, or written by an
    older evalq): the row can't be run from it."""


class CellInputError(InputError):
    """One candidate's cell of a row is bad (its media missing, its column empty): that cell
    fails, the row's other candidates go on."""

    def __init__(self, row_id: str, field: str, message: str, candidate: str) -> None:
        super().__init__(row_id, field, message)
        self.candidate = candidate
        self.args = (f"row {row_id}, candidate {candidate!r}: field {field!r}: {message}",)

    @classmethod
    def naming_column(cls, exc: InputError, field: str, candidate: str) -> CellInputError:
        """A cell's input error naming the row and the candidate's column (not the judged
        field, which the dataset does not have)."""
        where = candidate if exc.field == field else exc.field
        return cls(
            exc.row_id, where, exc.message.replace(f"{field!r}", f"{candidate!r}"), candidate
        )


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
    retry_after_s: float = 0.0  # for "countdown": how long to wait before the task runs again

    def __init__(
        self, message: str, raw: str | None = None, *, cost: CallCost | None = None
    ) -> None:
        self.message = message
        self.raw = raw
        self._cost = cost or CallCost()
        super().__init__(message)

    @property
    def cost(self) -> CallCost:
        return self._cost

    def costing(self, **spent: Any) -> Self:
        """This error with parts of its cost replaced (the judge client adds the attempts and
        limiter waits it counted). A new error: one already raised never changes under the
        code handling it."""
        priced = type(self).__new__(type(self), *self.args)
        priced.__dict__.update(self.__dict__)
        priced._cost = replace(self._cost, **spent)
        return priced


class TransientJudgeError(JudgeError):
    """5xx, timeouts, dropped connections: retried in-process with jittered backoff."""

    retry = "backoff"


class RateLimited(JudgeError):
    """429 per-minute quota (or our own limiter saying wait long): retried later as a Celery
    countdown, never by sleeping a worker."""

    retry = "countdown"

    def __init__(
        self,
        message: str,
        retry_after_s: float,
        raw: str | None = None,
        *,
        cost: CallCost | None = None,
    ) -> None:
        self.retry_after_s = retry_after_s
        super().__init__(message, raw, cost=cost)


class LimiterBusy(RateLimited):
    """Our own global limiter's next slot is further off than a thread should wait: come back
    later. Raised by the limiter itself (evalq.worker.judges.limiter); no request was made for
    it."""


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


class SharedWorkPending(JudgeError):
    """Another task is writing what this one needs (a prompt's rubric, shared by every
    candidate of the prompt): come back after ``retry_after_s`` and read it, instead of paying
    for it twice or holding a worker thread while it is written."""

    retry = "countdown"

    def __init__(self, message: str, retry_after_s: float) -> None:
        self.retry_after_s = retry_after_s
        super().__init__(message)


class CapBusy(JudgeError):
    """The spend cap has no room for this call while calls in flight hold reservations: ask
    again once they have settled (their real cost is usually far below their estimate)."""

    retry = "countdown"

    def __init__(self, message: str, retry_after_s: float, *, cost: CallCost | None = None):
        self.retry_after_s = retry_after_s
        super().__init__(message, cost=cost)


class BadRequest(JudgeError):
    """The server refused the request (4xx other than 429): a bug or bad input, not retried."""


def policy_of(exc: BaseException) -> RetryPolicy:
    """How `exc` is handled, read from its class. Anything not a JudgeError (a bug of ours) is
    "never": an unscored verdict, never a retry. Metrics ask `must_propagate`; a row's life
    (evalq.worker.lifecycle.judge_errors), batch mode and `evalq rubrics` switch on this."""
    return exc.retry if isinstance(exc, JudgeError) else "never"


def must_propagate(exc: BaseException) -> bool:
    """Whether a metric lets this error through to the task (to retry later or pause the job)
    instead of turning it into an unscored verdict."""
    return policy_of(exc) in ("countdown", "pause")


def retried_in_process(exc: BaseException) -> bool:
    """Whether the judge client tries the call again itself, with jittered backoff."""
    return policy_of(exc) == "backoff"


class BudgetSpent(JobHalted):
    """The job's spend reached its --max-cost-usd: it pauses instead of making the call, and
    `evalq resume JOB --max-cost-usd Y` continues it with a new cap."""
