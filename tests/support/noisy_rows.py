"""Rows for the noisy simulated judge (evalq.fake_gemini.skills.noisy): each item's odds and
seed in its own text, so a test knows its right answer and its spread, and which seeds give a
split item a start that no rule could stop on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalq.fake_gemini.skills.noisy import draw
from tests.support.datasets import write_rows

SPLIT_RATINGS = {"4": 0.5, "5": 0.5}


def split_seeds(count: int, odds: dict[str, float], where: str, first: int = 3) -> list[int]:
    """Seeds whose first `first` draws are not all one answer: an item the stopping rule must
    ask further."""
    seeds = []
    seed = 0
    while len(seeds) < count:
        seed += 1
        if len({draw(odds, seed, where, k) for k in range(first)}) > 1:
            seeds.append(seed)
    return seeds


def noisy_pointwise_rows(folder: Path, easy: int, split: int, tag: str = "") -> Path:
    """`easy` rows the judge rates 4 every time, then `split` rows it rates 4 or 5 evenly;
    `tag` in every prompt keeps them apart from other tests' in the call cache."""
    rows: list[dict[str, Any]] = [
        {
            "id": f"easy{i}",
            "prompt": f"Question {i}?",
            "response": f"Sure. [judge-odds 4=1 seed={i}]",
        }
        for i in range(easy)
    ]
    for i, seed in enumerate(split_seeds(split, SPLIT_RATINGS, "response")):
        odds = " ".join(f"{k}={v}" for k, v in SPLIT_RATINGS.items())
        rows.append(
            {
                "id": f"split{i}",
                "prompt": f"Torn {i}?",
                "response": f"Hm. [judge-odds {odds} seed={seed}]",
            }
        )
    return write_rows(folder / "noisy.jsonl", rows)


def noisy_pairwise_rows(folder: Path, easy: int, split: int) -> Path:
    """`easy` pairs whose A wins every time, then `split` pairs the judge calls 50/50."""
    rows: list[dict[str, Any]] = [
        {
            "id": f"easy{i}",
            "prompt": f"Question {i}?",
            "response_a": f"One. [judge-odds win=1 seed={i}]",
            "response_b": "Two.",
        }
        for i in range(easy)
    ]
    for i in range(split):
        rows.append(
            {
                "id": f"split{i}",
                "prompt": f"Torn {i}?",
                "response_a": f"One. [judge-odds win=0.5 seed={100 + i}]",
                "response_b": "Two.",
            }
        )
    return write_rows(folder / "pairs.jsonl", rows)


GROUNDING_CONTEXT = "Paris is the capital of France. The Eiffel Tower in Paris is 330 metres tall."
GROUNDING_QUERY = "What is the capital of France, and how tall is the Eiffel Tower?"
SURE_SENTENCE = "Paris is the capital of France."
TORN_SENTENCE = "The Eiffel Tower in Paris is 330 metres tall"
HALF_SUPPORTED = {"supported": 0.5, "unsupported": 0.5}


def noisy_grounded_rows(folder: Path, easy: int, split: int, tag: str) -> Path:
    """`easy` rows the judge finds grounded every time, then `split` rows whose second
    sentence it labels supported or unsupported evenly (a seed whose first draws differ)."""
    rows: list[dict[str, Any]] = [
        {
            "id": f"easy{i}",
            "query": f"{GROUNDING_QUERY} ({tag} {i})",
            "context": GROUNDING_CONTEXT,
            "response": SURE_SENTENCE,
        }
        for i in range(easy)
    ]
    for i, seed in enumerate(split_seeds(split, HALF_SUPPORTED, f"{TORN_SENTENCE}.")):
        response = f"{SURE_SENTENCE} {TORN_SENTENCE} [judge-odds supported=0.5 seed={seed}]."
        rows.append(
            {
                "id": f"split{i}",
                "query": f"{GROUNDING_QUERY} ({tag})",
                "context": GROUNDING_CONTEXT,
                "response": response,
            }
        )
    return write_rows(folder / f"{tag}.jsonl", rows)
