"""Reading a groundedness judge's reply: our structured form first, then the forms judges write.

We ask for one JSON object (an eligibility verdict and a label per sentence). Judges prompted
the FACTS way answer with a bare JSON array of {sentence, label, rationale, excerpt} objects,
often fenced, wrapped in prose, or one object per line without commas; all of these are read.
Anything else (no labels at all, a label we do not know) raises UnparseableReply, so the judge
is unscored for that row instead of silently counting as 0.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal, cast

from pydantic import BaseModel

from evalq.core.errors import UnparseableReply
from evalq.core.replies import clip, extract_json

Label = Literal["supported", "unsupported", "contradictory", "no_rad"]
LABELS: tuple[Label, ...] = ("supported", "unsupported", "contradictory", "no_rad")
# Labels for sentences that make a claim the context has to back; no_rad sentences do not.
NEEDS_ATTRIBUTION: frozenset[str] = frozenset({"supported", "unsupported", "contradictory"})

# Label spellings judges drift into. "Partially supported" is not supported: a sentence passes
# only when all of it is backed.
_LABEL_ALIASES: dict[str, Label] = {
    **{label: label for label in LABELS},
    "not_supported": "unsupported",
    "partially_supported": "unsupported",
    "partly_supported": "unsupported",
    "contradicted": "contradictory",
    "contradiction": "contradictory",
    "contradicts": "contradictory",
    "norad": "no_rad",
    "no_rad_needed": "no_rad",
    "no_attribution": "no_rad",
    "no_attribution_needed": "no_rad",
}
_LIST_KEYS = ("sentences", "labels", "sentence_labels", "results", "analysis", "verdicts")


class SentenceReply(BaseModel):
    """One sentence of the response as the judge labels it (part of the response schema)."""

    sentence: str
    label: Label
    rationale: str
    excerpt: str | None = None


class GroundingReply(BaseModel):
    """The response schema of the groundedness judge: eligibility first, then every sentence."""

    eligibility_rationale: str
    eligible: bool
    sentences: list[SentenceReply]


@dataclass(frozen=True)
class ParsedGrounding:
    """A readable reply. ``eligible`` is None when the judge's form has no eligibility verdict
    (the seed's bare array): eligibility was then not assessed."""

    sentences: list[SentenceReply]
    eligible: bool | None
    eligibility_reason: str
    form: Literal["object", "array", "objects"]


def normalise_label(value: Any) -> Label | None:
    if not isinstance(value, str):
        return None
    key = re.sub(r"[\s\-]+", "_", value.strip().strip("*_`\"'.").strip().lower())
    return _LABEL_ALIASES.get(key)


def _lower_keys(item: dict[Any, Any]) -> dict[str, Any]:
    return {str(k).strip().lower(): v for k, v in item.items()}


def _text_field(item: dict[str, Any], *names: str) -> str | None:
    for name in names:
        value = item.get(name)
        if isinstance(value, str):
            return value
    return None


def _excerpt(value: Any) -> str | None:
    """An excerpt as text; several quoted passages become one per line."""
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        joined = "\n".join(v.strip() for v in value if v.strip())
        return joined or None
    return None


def _sentence(item: Any, number: int, raw: str) -> SentenceReply:
    if not isinstance(item, dict):
        raise UnparseableReply(f"sentence {number} is not a JSON object", raw=clip(raw))
    fields = _lower_keys(item)
    text = _text_field(fields, "sentence", "text", "claim")
    if text is None or not text.strip():
        raise UnparseableReply(f"sentence {number} has no text", raw=clip(raw))
    label = normalise_label(fields.get("label", fields.get("verdict")))
    if label is None:
        got = fields.get("label", fields.get("verdict"))
        raise UnparseableReply(f"sentence {number} has an unknown label {got!r}", raw=clip(raw))
    rationale = _text_field(fields, "rationale", "reason", "explanation", "justification") or ""
    excerpt = _excerpt(fields.get("excerpt", fields.get("evidence", fields.get("quote"))))
    return SentenceReply(
        sentence=text.strip(), label=label, rationale=rationale.strip(), excerpt=excerpt
    )


_TRUE = frozenset({"true", "yes", "eligible", "y", "1"})
_FALSE = frozenset({"false", "no", "ineligible", "not_eligible", "not eligible", "n", "0"})


def _eligibility(fields: dict[str, Any], raw: str) -> tuple[bool | None, str]:
    reason = _text_field(
        fields,
        "eligibility_rationale",
        "eligibility_reason",
        "eligibility_explanation",
        "eligibility_justification",
    )
    value = fields.get("eligible", fields.get("is_eligible", fields.get("eligibility")))
    if isinstance(value, dict):
        nested = _lower_keys(value)
        reason = reason or _text_field(nested, "rationale", "reason", "explanation")
        value = nested.get("eligible", nested.get("verdict", nested.get("label")))
    if value is None:
        return None, reason or ""
    if isinstance(value, bool):
        return value, reason or ""
    word = str(value).strip().strip("*_`\"'.").lower()
    if word in _TRUE:
        return True, reason or ""
    if word in _FALSE:
        return False, reason or ""
    raise UnparseableReply(f"unreadable eligibility verdict {value!r}", raw=clip(raw))


def _scan_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in the text that carries a label (JSON lines, comma-less
    arrays, objects scattered through prose)."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    position = 0
    while (start := text.find("{", position)) != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError):
            position = start + 1
            continue
        if isinstance(value, dict) and "label" in _lower_keys(value):
            found.append(value)
        position = end
    return found


def _labelled_list(value: Any) -> bool:
    return isinstance(value, list) and any(
        isinstance(item, dict) and "label" in _lower_keys(item) for item in value
    )


def _items_of(data: Any) -> tuple[list[Any] | None, dict[str, Any] | None]:
    """(sentence items, the object holding them) from a parsed JSON value."""
    if isinstance(data, list):
        return data, None
    if not isinstance(data, dict):
        return None, None
    fields = _lower_keys(data)
    for key in _LIST_KEYS:
        if isinstance(fields.get(key), list):
            return cast(list[Any], fields[key]), fields
    for value in fields.values():  # the list under a key we did not foresee
        if _labelled_list(value):
            return cast(list[Any], value), fields
    if "label" in fields:
        return [data], None  # a one-sentence response, labelled as a bare object
    return None, fields


def parse_grounding(text: str) -> ParsedGrounding:
    """Read the labelled sentences (and eligibility, when given) from a judge reply."""
    if not isinstance(text, str) or not text.strip():
        raise UnparseableReply("empty reply", raw=text if isinstance(text, str) else None)
    try:
        data: Any = extract_json(text)
    except UnparseableReply:
        data = None
    items, holder = _items_of(data)
    form: Literal["object", "array", "objects"] = (
        "object" if holder is not None else "array" if isinstance(data, list) else "objects"
    )
    if items is None:
        items, form = _scan_objects(text), "objects"
    eligible, reason = _eligibility(holder, text) if holder is not None else (None, "")
    if not items and eligible is not False:
        # An ineligible response may come back without sentences; anything else must have some.
        raise UnparseableReply("no labelled sentences found in the reply", raw=clip(text))
    sentences = [_sentence(item, number, text) for number, item in enumerate(items, start=1)]
    return ParsedGrounding(
        sentences=sentences, eligible=eligible, eligibility_reason=reason, form=form
    )
