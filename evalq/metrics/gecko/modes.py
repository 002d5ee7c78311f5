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
