"""A rating judge's replies, written the way the pointwise and pairwise prompts ask for them,
and the fake server's script rules that give them.

Unit tests hand them to an in-memory judge and integration tests script the fake server with
them; one writer keeps every test speaking the format the parsers read
(evalq.metrics.ratings.parsing)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def rating(value: object, explanation: str = "scripted") -> str:
    """A pointwise reply rating the response `value` (1-5, or anything a test wants refused)."""
    return json.dumps({"explanation": explanation, "rating": value})


def choice(value: str, explanation: str = "scripted") -> str:
    """A pairwise reply choosing `value`: "A", "B" or "SAME"."""
    return json.dumps({"explanation": explanation, "pairwise_choice": value})


def rated_after_a_429(text: str, value: int, retry_delay_s: float) -> list[dict[str, Any]]:
    """Script rules: the first call matching `text` is refused with a 429 that asks for a retry
    after `retry_delay_s`; every call after it is rated `value`."""
    return [
        {"match": text, "status": 429, "retry_delay_s": retry_delay_s, "times": 1},
        {"match": text, "reply": rating(value)},
    ]


def rated_in_turn(text: str, values: Sequence[int]) -> list[dict[str, Any]]:
    """Script rules: the calls matching `text` are rated `values` in turn, the last one every
    time after (a row whose repeated samples disagree, or one rated the same throughout)."""
    *once, last = values
    return [{"match": text, "reply": rating(v), "times": 1} for v in once] + [
        {"match": text, "reply": rating(last)}
    ]
