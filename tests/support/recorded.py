"""Bodies Gemini and Vertex AI were seen to send, as recorded in tests/fixtures, each file
naming where it was published: error bodies (gemini_errors) and replies with log
probabilities (gemini_logprobs). The replay corpus has its own reader (gemini_replies.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ERRORS = FIXTURES / "gemini_errors"
LOGPROBS = FIXTURES / "gemini_logprobs"


def _recorded(folder: Path, name: str) -> dict[str, Any]:
    data = json.loads((folder / f"{name}.json").read_text())
    assert data["source"], f"{name}: say where the body comes from"
    return dict(data)


def recorded_error(name: str) -> dict[str, Any]:
    """An error body's file: its status, its body, its source and what evalq does with it."""
    return _recorded(ERRORS, name)


def recorded_error_names() -> list[str]:
    return sorted(p.stem for p in ERRORS.glob("*.json"))


def recorded_logprobs(name: str) -> dict[str, Any]:
    """A reply with log probabilities (or the 400 refusing them): its status, body, source."""
    return _recorded(LOGPROBS, name)
