"""A groundedness row's plan: the response every judge labels, and one unit per judge."""

from __future__ import annotations

from typing import Literal

from evalq.core.metric import Plan, Unit


class JudgeUnit(Unit):
    """One judge model labelling the row's response."""

    kind: Literal["judge"] = "judge"
    judge_model: str


class GroundednessPlan(Plan[JudgeUnit]):
    """The response every judge labels (the dataset's, or one the model under test wrote)."""

    judges: list[str]
    judge_template: str
    response: str
    response_source: Literal["dataset", "candidate"]
    candidate_model: str | None = None  # these three only for a generated response
    candidate_template: str | None = None
    candidate_finish_reason: str | None = None
    samples: int = 1  # labellings per judge at most: K for --samples K, the maximum for auto
