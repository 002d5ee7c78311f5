"""Which driver runs a step of a row's life, as a named value: the online tasks (with what
they know of their tries) or a batch sweep. The judge-error policy (judge_errors) acts on it:
online, a rate limit is a countdown retry; in batch mode the row is held for a later sweep."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Online:
    """An online task: how many retries it has had, and when its unit first met a server 429
    (the time rides along in the task's kwargs, so it survives the countdowns)."""

    retries: int = 0
    first_429_at: float | None = None


@dataclass(frozen=True)
class Batch:
    """A batch sweep: it does not retry; a later sweep looks again."""


BATCH = Batch()
Mode = Online | Batch
