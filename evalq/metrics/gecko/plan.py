"""A Gecko row's plan and units: stored once per row, so a redelivery keeps its numbering."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from evalq.core.metric import Plan, Unit
from evalq.core.models import (
    Rubric,
)
from evalq.metrics.gecko.modes import ValidatorMode


class QuestionUnit(Unit):
    """One validator judge on one question of the rubric."""

    kind: Literal["question"] = "question"
    judge_model: str
    question: int  # its index in the rubric


class BatchUnit(Unit):
    """One validator judge on all of the row's questions, in one call."""

    kind: Literal["batch"] = "batch"
    judge_model: str
    questions: int  # how many


GeckoUnit = Annotated[QuestionUnit | BatchUnit, Field(discriminator="kind")]


class GeckoPlan(Plan[GeckoUnit]):
    """A Gecko row's plan: its rubric (written once, whatever the judges) and who validates."""

    rubric: Rubric
    validator: ValidatorMode
    validator_template: str
    judges: list[str]
    rubric_model: str | None = None  # None: the row's own questions, no rubric written
    soft: bool = False  # --soft: questions scored by the probability of the expected answer
    samples: int = 1  # each question's samples: K, or the most `--samples auto` may take
