"""How the fake thinks: the real models' thinking rules, kept apart from evalq's own table
(evalq.core.thinking) so a mistake in one is caught by the other rather than copied into both;
where this and Google's documentation differ, this is wrong."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass

from evalq.fake_gemini.protocol import FakeRequest


class ThinkingRefused(ValueError):
    """The real API's 400 INVALID_ARGUMENT for this thinking configuration."""


@dataclass(frozen=True)
class Thinker:
    prefix: str
    budget_range: tuple[int, int] | None = None  # positive budgets; None: takes levels
    can_disable: bool = True
    thinks_by_default: bool = True
    levels: tuple[str, ...] = ()
    natural: tuple[int, int] = (256, 1024)  # what dynamic thinking spends: base, spread


_MODELS = (
    Thinker("gemini-2.5-flash-lite", (512, 24576), thinks_by_default=False, natural=(128, 512)),
    Thinker("gemini-2.5-flash", (1, 24576), natural=(256, 768)),
    Thinker("gemini-2.5-pro", (128, 32768), can_disable=False, natural=(512, 1536)),
    Thinker("gemini-3-pro", levels=("LOW", "HIGH"), natural=(512, 1536)),
    Thinker("gemini-3-flash", levels=("MINIMAL", "LOW", "MEDIUM", "HIGH"), natural=(256, 768)),
)
# Share of the natural amount each level spends (MINIMAL is close to no thinking).
_LEVEL_SHARE = {"MINIMAL": 0.0, "LOW": 0.25, "MEDIUM": 0.5, "HIGH": 1.0}


def thinker(model: str) -> Thinker | None:
    name = model.rsplit("/", 1)[-1].lower()
    matches = [t for t in _MODELS if name.startswith(t.prefix)]
    return max(matches, key=lambda t: len(t.prefix)) if matches else None


def check(request: FakeRequest) -> None:
    """Raise ThinkingRefused with the real API's message for a configuration it refuses."""
    who = thinker(request.model)
    budget, level = request.thinking_budget, request.thinking_level
    if who is None or (budget is None and level is None):
        return  # models the fake does not simulate think not at all and ignore the config
    if budget is not None and level is not None:
        raise ThinkingRefused("You can only set only one of thinking budget and thinking level.")
    if level is not None:
        if who.budget_range is not None:
            raise ThinkingRefused("Thinking level is not supported for this model.")
        if level.upper() not in who.levels:
            raise ThinkingRefused(
                f"Thinking level {level.upper()} is not supported for this model."
            )
        return
    assert budget is not None
    if who.budget_range is None or budget == -1:
        return  # Gemini 3 takes budgets for backward compatibility
    if budget == 0:
        if not who.can_disable:
            raise ThinkingRefused("Budget 0 is invalid. This model only works in thinking mode.")
        return
    low, high = who.budget_range
    if not low <= budget <= high:
        low_shown = 0 if who.can_disable and low == 1 else low
        raise ThinkingRefused(
            f"The thinking budget {budget} is invalid. Please choose a value between "
            f"{low_shown} and {high}."
        )


def thought_tokens(request: FakeRequest) -> int:
    """What this request spends thinking, before maxOutputTokens cuts it short."""
    who = thinker(request.model)
    if who is None:
        return 0
    digest = int.from_bytes(hashlib.sha256(request.text.encode()).digest()[:4], "big")
    base, spread = who.natural
    natural = base + digest % spread
    budget, level = request.thinking_budget, request.thinking_level
    if level is not None:
        return round(natural * _LEVEL_SHARE.get(level.upper(), 1.0))
    if budget is None:
        return natural if who.thinks_by_default or who.budget_range is None else 0
    if budget == 0:
        return 0
    if budget < 0:
        return natural
    return min(budget, natural)


def thought_signature(request: FakeRequest) -> str | None:
    """The signature a Gemini 3 model puts on its answer after thinking (base64 of opaque
    bytes, deterministic here); the 2.5 models are not given one on a plain text reply."""
    who = thinker(request.model)
    if who is None or who.budget_range is not None:
        return None
    digest = hashlib.sha256(b"fake-thought-signature\0" + request.text.encode()).digest()
    return base64.b64encode(digest).decode()
