"""The replay corpus: reply bodies the real Gemini API and Vertex AI sent, as pasted publicly
(tests/fixtures/gemini_replies, one JSON file per body, each naming its source), with the
outcome evalq must produce for each. tests/integration/vertex/test_replay_corpus.py replays them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

FOLDER = Path(__file__).resolve().parents[1] / "fixtures" / "gemini_replies"
Outcome = Literal["scored", "unscored", "retried"]
TOKEN_KINDS = ("prompt", "output", "thought", "cached")


@dataclass(frozen=True)
class Tokens:
    prompt: int = 0
    output: int = 0
    thought: int = 0
    cached: int = 0

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(*(getattr(self, k) + getattr(other, k) for k in TOKEN_KINDS))

    def as_dict(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in TOKEN_KINDS}


@dataclass(frozen=True)
class Reply:
    """One recorded body. ``then`` names the reply that answers the retry of an error body."""

    name: str
    source: str
    date: str
    api: Literal["gemini", "vertex"]
    what: str
    status: int
    body: dict[str, Any] | list[Any]
    outcome: Outcome
    reason: str | None
    tokens: Tokens
    rating: int | None = None
    then: str | None = None


def load_replies(folder: Path = FOLDER) -> dict[str, Reply]:
    """Every fixture by name; a file whose name is not its ``name`` field is an error."""
    replies: dict[str, Reply] = {}
    for path in sorted(folder.glob("*.json")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        if raw["name"] != path.stem:
            raise ValueError(f"{path}: name {raw['name']!r} is not the file's name")
        expect = raw["expect"]
        replies[raw["name"]] = Reply(
            name=raw["name"],
            source=raw["source"],
            date=raw["date"],
            api=raw["api"],
            what=raw["what"],
            status=raw["status"],
            body=raw["body"],
            outcome=expect["outcome"],
            reason=expect["reason"],
            tokens=Tokens(**expect["tokens"]),
            rating=expect.get("rating"),
            then=raw.get("then"),
        )
    return replies


def usage_tokens(body: object) -> Tokens:
    """What a body's usageMetadata bills (zero where it has none, or is no object)."""
    usage = body.get("usageMetadata") if isinstance(body, dict) else None
    if not isinstance(usage, dict):
        return Tokens()
    return Tokens(
        prompt=int(usage.get("promptTokenCount", 0)),
        output=int(usage.get("candidatesTokenCount", 0)),
        thought=int(usage.get("thoughtsTokenCount", 0)),
        cached=int(usage.get("cachedContentTokenCount", 0)),
    )
