"""The rank options read from ``ctx.options``: the candidates, the guidance texts or template
that generate a candidate's response when it is not a column, and the fit's whole numbers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalq.core.column_names import refuse_repeated_names
from evalq.core.errors import DatasetError

MAX_CANDIDATES = 20


def candidates_of(options: Mapping[str, Any]) -> list[str]:
    raw = options.get("candidates")
    names = raw.split(",") if isinstance(raw, str) else raw
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise DatasetError("rank needs candidates: a list of names (--candidates a,b,c)")
    cleaned = [n.strip() for n in names if n.strip()]
    if len(cleaned) < 2:
        raise DatasetError(f"rank needs at least two candidates, got {cleaned}")
    refuse_repeated_names("--candidates", cleaned, "candidate")  # a column, or a generated one
    if len(cleaned) > MAX_CANDIDATES:
        raise DatasetError(f"at most {MAX_CANDIDATES} candidates, got {len(cleaned)}")
    return cleaned


def _candidate_prompts(options: Mapping[str, Any]) -> dict[str, str]:
    prompts = options.get("candidate_prompts") or {}
    if not isinstance(prompts, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in prompts.items()
    ):
        raise DatasetError("candidate_prompts must map candidate names to guidance texts")
    return dict(prompts)


def _prompt_template(options: Mapping[str, Any]) -> str | None:
    text = options.get("prompt_template")
    return text if isinstance(text, str) and text.strip() else None


def _generated(options: Mapping[str, Any], candidate: str) -> bool:
    return candidate in _candidate_prompts(options) or _prompt_template(options) is not None


def _int_option(options: Mapping[str, Any], name: str, default: int, low: int) -> int:
    value = options.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise DatasetError(f"{name} must be a whole number >= {low}, got {value!r}")
    return value
