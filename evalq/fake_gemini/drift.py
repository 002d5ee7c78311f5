"""A simulated judge that drifts on purpose, so a drift report is tested against the truth: a
model named like ``fake-drift-10pct`` changes the verdicts of that share of items, chosen by the
item's hash (never the sample's or the order's), and says so in its explanation."""

from __future__ import annotations

import hashlib
import json
import re
from typing import TYPE_CHECKING, Any

from evalq.fake_gemini.prompt_grammar import blocks

if TYPE_CHECKING:
    from evalq.fake_gemini.protocol import FakeRequest

LABEL = "[simulated drift]"
# Any model whose name holds "drift-<N>pct" drifts by N percent (fake-drift-10pct,
# judge-drift-2.5pct); other models never drift.
_NAME = re.compile(r"drift-(\d+(?:\.\d+)?)pct")
# A response carrying this mark wins every comparison a drifting judge makes against one
# without it (however its share is set): a ranking whose order a new judge changes on purpose.
FAVOURED = "[drift-favoured]"
_LETTER_SWAP = {"a": "b", "b": "a", "c": "a", "d": "a"}


def drift_share(model: str) -> float | None:
    """The share of items a model drifts on (0.1 for fake-drift-10pct); None: it does not."""
    match = _NAME.search(model)
    return None if match is None else min(1.0, float(match.group(1)) / 100)


def item_key(request: FakeRequest) -> str:
    """What makes an item this item, whichever order its two responses were shown in and
    whichever sample it is: its blocks (a comparison's two responses in a fixed order) and
    its media's bytes."""
    found = blocks(request.user_text)
    pair = sorted(body for kind, body in found if kind in ("response_a", "response_b"))
    rest = sorted((kind, body) for kind, body in found if kind not in ("response_a", "response_b"))
    media = sorted(
        hashlib.sha256(m.data or (m.uri or "").encode()).hexdigest() for m in request.media
    )
    return json.dumps([pair, rest, media])


def flips(key: str, share: float) -> bool:
    """Whether the item of this key drifts: a uniform draw from its hash under the share."""
    point = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") / 2.0**64
    return point < share


def drifted(request: FakeRequest, reply: str) -> str:
    """The reply a drifting model gives instead of ``reply`` (the simulated judge's): the same
    unless the item drifts; then its rating moves by one, yes and no swap, a choice letter
    changes, or a comparison's winner changes."""
    share = drift_share(request.model)
    if share is None:
        return reply
    try:
        data = json.loads(reply)
    except ValueError:
        return reply
    if not isinstance(data, dict):
        return reply
    if "pairwise_choice" in data:
        changed = _comparison(request, data["pairwise_choice"], share)
        return _with(data, "pairwise_choice", changed)
    if not flips(item_key(request), share):
        return reply
    if isinstance(data.get("rating"), int):
        rating = data["rating"]
        return _with(data, "rating", rating + 1 if rating < 5 else rating - 1)
    answer = data.get("answer")
    if isinstance(answer, str) and answer.lower() in ("yes", "no"):
        return _with(data, "answer", "no" if answer.lower() == "yes" else "yes")
    if isinstance(answer, str) and answer.lower() in _LETTER_SWAP:
        return _with(data, "answer", _LETTER_SWAP[answer.lower()])
    return reply


def _comparison(request: FakeRequest, choice: Any, share: float) -> Any:
    shown = dict(blocks(request.user_text))
    a, b = shown.get("response_a", ""), shown.get("response_b", "")
    if (FAVOURED in a) != (FAVOURED in b):
        return "A" if FAVOURED in a else "B"
    if not flips(item_key(request), share):
        return choice
    if choice in ("A", "B"):
        return "B" if choice == "A" else "A"
    return "A" if a <= b else "B"  # a tie goes to the response first in a fixed order


def _with(data: dict[str, Any], field: str, value: Any) -> str:
    before = data[field]
    if value == before:
        return json.dumps(data)
    note = f"{LABEL} This judge drifts on purpose: it changed the verdict {before} to {value}."
    explanation = data.get("explanation")
    data = {**data, field: value}
    if isinstance(explanation, str):
        data["explanation"] = f"{explanation} {note}"
    return json.dumps(data)
