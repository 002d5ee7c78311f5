"""The Gecko options read from ``ctx.options``: the validator mode and what a row's own questions
do to the generated rubric. Unknown values are dataset errors, raised before anything is sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from evalq.core.errors import DatasetError

ValidatorMode = Literal["per-question", "batched"]
VALIDATOR_MODES: tuple[str, ...] = ("per-question", "batched")
QuestionsMode = Literal["replace", "extend"]
QUESTIONS_MODES: tuple[str, ...] = ("replace", "extend")


def validator_mode(options: Mapping[str, Any]) -> ValidatorMode:
    """The --validator option: one call per question (default) or one per row."""
    value = options.get("validator") or "per-question"
    if value not in VALIDATOR_MODES:
        raise DatasetError(
            f"unknown validator mode {value!r}; use one of: {', '.join(VALIDATOR_MODES)}"
        )
    return "batched" if value == "batched" else "per-question"


def questions_mode(options: Mapping[str, Any]) -> QuestionsMode:
    """The --questions option: a row's own questions replace the generated rubric (default)
    or are added to it."""
    value = options.get("questions") or "replace"
    if value not in QUESTIONS_MODES:
        raise DatasetError(
            f"unknown questions mode {value!r} (option questions); use one of: "
            f"{', '.join(QUESTIONS_MODES)}"
        )
    return "extend" if value == "extend" else "replace"


def soft_mode(options: Mapping[str, Any]) -> bool:
    """The --soft option: questions scored by the probability of the expected answer. Only in
    per-question mode: a batched reply answers every question in one text, and which of its
    tokens is which answer is not something to guess."""
    value = options.get("soft")
    if value is None or value is False:
        return False
    if value is not True:
        raise DatasetError(f"option soft must be true or false, got {value!r}")
    if validator_mode(options) == "batched":
        raise DatasetError(
            "--soft reads each answer's probability from its own reply; use it with "
            "--validator per-question (the default), not batched"
        )
    return True
