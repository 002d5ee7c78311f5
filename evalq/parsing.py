"""Parsers for judge replies: structured JSON first, then the forms judges actually write.

Every parser either returns a clean value or raises UnparseableReply carrying the raw text, so
a reply we cannot read becomes an unscored question with a reason, never a silent 0.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from evalq.errors import UnparseableReply
from evalq.models import TAGS, RubricReply

_FENCE_RE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_LABELLED_RE = re.compile(
    r"\b(?:final\s+)?(?:verdict|answer)\b\s*(?:is\s*)?[:=\-]?\s*[\"'(\[]?\s*(yes|no)\b",
    re.IGNORECASE,
)
_LEADING_RE = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)
_WORD_RE = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
_MAX_RAW = 4000


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_RAW else text[:_MAX_RAW] + "…"


def extract_json(text: str) -> Any:
    """Find a JSON value in a reply: whole text, a fenced block, or the outermost {...}/[...]."""
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCE_RE.finditer(text)]
    for open_ch, close_ch in (("{", "}"), ("[", "]")):
        start, end = text.find(open_ch), text.rfind(close_ch)
        if 0 <= start < end:
            candidates.append(text[start : end + 1])
    for candidate in candidates:
        if not candidate:
            continue
        try:
            return json.loads(candidate)
        except (json.JSONDecodeError, RecursionError):
            continue
    raise UnparseableReply("no JSON value found in the reply", raw=_clip(text))


def _yes_no_word(value: str) -> str | None:
    m = _LEADING_RE.match(value.strip().strip("*_`\"'"))
    return m.group(1).lower() if m else None


def _looks_like_json(text: str) -> bool:
    stripped = text.strip()
    return stripped.startswith(("{", "[", "```json", "```JSON")) or (
        stripped.startswith("```") and "{" in stripped[:20]
    )


def parse_yes_no(text: str, *, strict: bool = False) -> str:
    """Read a yes/no verdict from JSON ({"answer": ...}) or prose ("Yes.", "**Verdict:** no").

    A reply that looks like JSON but does not parse (malformed, or cut off) is unparseable: its
    prose may well contain "yes" or "no" that are not the verdict. ``strict`` (a reply cut off
    at MAX_TOKENS) accepts only a complete JSON verdict.
    """
    if not isinstance(text, str) or not text.strip():
        raise UnparseableReply("empty reply", raw=text if isinstance(text, str) else None)
    try:
        data = extract_json(text)
    except UnparseableReply:
        if strict or _looks_like_json(text):
            raise UnparseableReply("malformed JSON reply", raw=_clip(text)) from None
        data = None
    if isinstance(data, dict):
        for key in ("answer", "verdict", "Answer", "Verdict", "result"):
            value = data.get(key)
            if isinstance(value, str) and (word := _yes_no_word(value)):
                return str(word)
            if isinstance(value, bool):
                return "yes" if value else "no"
    if strict or data is not None:
        raise UnparseableReply("JSON reply has no yes/no answer field", raw=_clip(text))
    plain = text.replace("*", "").replace("_", " ").replace("`", "")
    labelled = _LABELLED_RE.findall(plain)
    if labelled:
        return str(labelled[-1]).lower()
    first_clause = re.split(r"[.,;:!?\n]", plain.strip(), maxsplit=1)[0]
    if (word := _yes_no_word(plain)) and len(_WORD_RE.findall(first_clause)) == 1:
        return word
    words = {str(w).lower() for w in _WORD_RE.findall(plain)}
    if len(words) == 1:
        return words.pop()
    why = "both yes and no appear" if words else "no yes/no verdict found"
    raise UnparseableReply(f"could not read a yes/no verdict: {why}", raw=_clip(text))


def _normalise_rubric(data: Any) -> Any:
    """Tolerate the usual drift: capitalised answers, unknown tags, 'qas' for 'questions'."""
    if not isinstance(data, dict):
        return data
    questions = data.get("questions", data.get("qas"))
    keywords = data.get("keywords")
    if isinstance(keywords, str):
        keywords = re.findall(r"\[([^\]]+)\]", keywords) or [keywords]
    out_questions: list[Any] = []
    for q in questions if isinstance(questions, list) else []:
        if not isinstance(q, dict):
            out_questions.append(q)
            continue
        item = dict(q)
        if isinstance(item.get("answer"), str):
            item["answer"] = item["answer"].strip().strip(".").lower()
        tag = item.get("tag", item.get("question_type"))
        tag = tag.strip().lower() if isinstance(tag, str) else "other"
        item["tag"] = tag if tag in TAGS else "other"
        item.setdefault("keywords", [])
        item.setdefault("justification", "")
        out_questions.append(item)
    return {"keywords": keywords, "questions": out_questions if questions is not None else None}


def parse_rubric(text: str) -> RubricReply:
    """Parse a rubric-generation reply into keywords and yes/no questions."""
    data = _normalise_rubric(extract_json(text))
    try:
        rubric = RubricReply.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UnparseableReply(
            f"rubric reply does not fit the schema at {where}: {first['msg']}", raw=_clip(text)
        ) from None
    if not rubric.questions:
        raise UnparseableReply("rubric reply has no questions", raw=_clip(text))
    return rubric
