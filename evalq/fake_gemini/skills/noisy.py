"""A simulated judge made noisy on purpose: a text carrying ``[judge-odds ...]`` is answered by
a draw from those odds, fixed by the item's seed, the order shown and the sample's seed, so a
test knows each item's right answer and spread (the manual's adaptive repeats page)."""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import TYPE_CHECKING

from evalq.fake_gemini.prompt_grammar import blocks_by_kind
from evalq.fake_gemini.protocol import schema_properties

if TYPE_CHECKING:
    from evalq.fake_gemini.protocol import FakeRequest, SeesImages

LABEL = "[simulated judge]"
# Where the odds sit, in the row's own text: a rating's response ``[judge-odds 4=0.6 5=0.4]``;
# one response of a comparison ``[judge-odds win=0.7 same=0.1]`` (it loses with the rest,
# whichever order it is shown in); a Gecko question's text ``[judge-odds yes=0.7 no=0.3]``
# (a video question's: letters of the choices as shown, ``[judge-odds a=0.5 b=0.5]``).
# ``seed=N`` makes another item with the same odds draw differently. The sample's seed is
# generationConfig.seed (evalq sends the sample index at a temperature above zero); without
# one (temperature 0) the likeliest answer is given.
_ODDS = re.compile(r"\[judge-odds\s+([^\]]*)\]")
_ENTRY = re.compile(r"([\w.-]+)=([0-9.]+)")


def odds_in(text: str) -> tuple[dict[str, float], int] | None:
    """The odds a text carries (answer -> chance) and its seed; None when it carries none."""
    match = _ODDS.search(text)
    if match is None:
        return None
    entries = dict(_ENTRY.findall(match.group(1)))
    seed = int(float(entries.pop("seed", "0")))
    return {answer: float(chance) for answer, chance in entries.items()}, seed


def draw(odds: dict[str, float], seed: int, where: str, sample: int | None) -> str:
    """One answer drawn from ``odds``, fixed by the item, where it was shown and the sample;
    the likeliest one when there is no sample seed."""
    answers = sorted(odds, key=lambda answer: (-odds[answer], answer))
    if sample is None:
        return answers[0]
    key = f"{seed}|{where}|{sample}|{json.dumps(odds, sort_keys=True)}".encode()
    rng = random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))
    point, total = rng.random() * sum(odds.values()), 0.0
    for answer in answers:
        total += odds[answer]
        if point < total:
            return answer
    return answers[-1]


def answer(request: FakeRequest, judge: SeesImages) -> str | None:
    properties = schema_properties(request.response_schema)
    blocks = blocks_by_kind(request.text)
    if "pairwise_choice" in properties:
        return _comparison(request, blocks)
    for field, block, whose in _DRAWN:
        if {"explanation", field} <= properties and block in blocks:
            found = odds_in(blocks[block])
            if found is None:
                return None
            said = draw(*found, block, request.seed)
            explanation = f"{LABEL} A noisy judge: this {field} was drawn from the {whose} odds."
            return json.dumps({"explanation": explanation, field: _written(field, said)})
    return None


# The replies drawn from a block's odds: the reply's field, the block, and whose odds they are.
_DRAWN = (
    ("answer", "question", "question's"),
    ("answer", "video_question", "question's"),
    ("rating", "response", "item's"),
)


def _written(field: str, said: str) -> str | int:
    """A rating is written as the whole number the rating schema asks for."""
    return int(float(said)) if field == "rating" else said


def _comparison(request: FakeRequest, blocks: dict[str, str]) -> str | None:
    for side, other in (("A", "B"), ("B", "A")):
        found = odds_in(blocks.get(f"response_{side.lower()}", ""))
        if found is None:
            continue
        odds, seed = found
        odds = {**odds, "lose": max(0.0, 1.0 - odds.get("win", 0.0) - odds.get("same", 0.0))}
        said = draw(odds, seed, side, request.seed)
        choice = {"win": side, "lose": other}.get(said, "SAME")
        explanation = f"{LABEL} A noisy judge: this choice was drawn from the item's odds."
        return json.dumps({"explanation": explanation, "pairwise_choice": choice})
    return None
