"""The structured replies the judge is asked for (response schemas) that several packages
share: Gecko's rubric and yes/no verdict, which the fake server's simulated judge answers in."""

from __future__ import annotations

from typing import Literal

from evalq.core.models import Model, Tag


class RubricQuestionReply(Model):
    question: str
    answer: Literal["yes", "no"]
    tag: Tag
    keywords: list[str]
    justification: str


class RubricReply(Model):
    """Schema for rubric generation: the prompt's keywords and one or more questions per keyword."""

    keywords: list[str]
    questions: list[RubricQuestionReply]


class VerdictReply(Model):
    """Schema for the validator: reasoning first, then the answer."""

    explanation: str
    answer: Literal["yes", "no"]
