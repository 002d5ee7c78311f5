"""How a step of a row's life ended, for whoever runs it to act on: a row task (a chord, a Celery
retry, a return value) or a batch sweep (counted as waiting, held or finished). Each driver's
outcomes are a type of their own (OnlineOutcome, BatchOutcome)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from evalq.core.metric import Plan


class AwaitingReply(Exception):
    """A reply is not in yet (batch mode: the request is collected for the next batch). Not a
    JudgeError, so no metric turns it into a verdict; the row waits for a later sweep."""


@dataclass(frozen=True)
class Planned:
    """The row's plan, stored, and the indexes of its units still to ask."""

    frees_turn: ClassVar[bool] = False
    plan: Plan[Any]
    units: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Finished:
    """The row is counted: scored, partial or failed. `units`: how many went to tasks, when
    prepare_row finished it itself (every unit answered inline)."""

    frees_turn: ClassVar[bool] = True

    status: str
    units: int | None = None


@dataclass(frozen=True)
class Answered:
    """A unit's verdict is recorded."""

    frees_turn: ClassVar[bool] = True

    status: str


@dataclass(frozen=True)
class Duplicate:
    """Done before this run (a redelivery): nothing written. `status`: a unit's verdict's."""

    frees_turn: ClassVar[bool] = True

    status: str | None = None


@dataclass(frozen=True)
class Skipped:
    """Nothing to do now: the row is done, or the job idle (left for `evalq resume`)."""

    frees_turn: ClassVar[bool] = True


@dataclass(frozen=True)
class Paused:
    """The job is paused (by this step, or before it): the row's work stops here."""

    frees_turn: ClassVar[bool] = True


@dataclass(frozen=True)
class RetryAfter:
    """Run the step again after `delay_s`; `first_429_at`: when the unit first met a server
    429, carried to the next try (None: not rate limited by the server)."""

    frees_turn: ClassVar[bool] = False  # the row tries again, holding its turn

    delay_s: float
    first_429_at: float | None = None


@dataclass(frozen=True)
class Waiting:
    """Batch mode: the row waits on a batch reply."""

    frees_turn: ClassVar[bool] = False  # batch rows take no turns


@dataclass(frozen=True)
class Held:
    """Batch mode: the row waits on work another task is doing (a shared rubric) or on a rate
    limit: a later sweep looks again."""

    frees_turn: ClassVar[bool] = False  # batch rows take no turns


@dataclass(frozen=True)
class GaveUp:
    """A judge error the work stops at, with why (a failed row's error, a unit's verdict)."""

    why: str


# `frees_turn`: whether a row task that ends with the outcome lets its row's turn go
# (evalq.worker.dispatch.turns); not when its units go on as a chord (Planned) or it tries again
# (RetryAfter).
OnlineOutcome = Planned | Finished | Answered | Duplicate | Skipped | Paused | RetryAfter
BatchOutcome = Planned | Finished | Paused | Waiting | Held
Outcome = OnlineOutcome | BatchOutcome


def online_only(outcome: Outcome) -> OnlineOutcome:
    """A step shared by both drivers, run online: what only a batch sweep can meet (a reply
    awaited, a row held for a later sweep) cannot come back here."""
    if isinstance(outcome, Waiting | Held):
        raise AssertionError(f"an online step ended as only a batch sweep can: {outcome}")
    return outcome
