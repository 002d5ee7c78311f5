"""Parsers for judge replies: structured JSON first, then the forms judges actually write.

Every parser either returns a clean value or raises UnparseableReply carrying the raw text, so
a reply we cannot read becomes an unscored question with a reason, never a silent 0.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel

from evalq.core.errors import UnparseableReply
from evalq.core.models import TAGS, Question
from evalq.core.replies import clip, extract_json, fitted, hedge, options_named
from evalq.core.reply_schemas import RubricReply

_LABELLED_RE = re.compile(
    r"\b(?P<final>final\s+)?(?:verdict|answer)\b\s*(?:is\s*)?[:=\-]?\s*[\"'(\[]?\s*(yes|no)\b",
    re.IGNORECASE,
)
_YES_NO_OPTION_RE = re.compile(r"[\s\"'`*_(\[]*(?P<o>yes|no)\b[)\]\"'`*_]*", re.IGNORECASE)
_LEADING_RE = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)
_WORD_RE = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


def _yes_no_word(value: str, text: str) -> str | None:
    named = options_named(value, _YES_NO_OPTION_RE)
    if len(named) > 1:
        raise hedge(named, text)
    m = _LEADING_RE.match(value.strip().strip("*_`\"'"))
    return m.group(1).lower() if m else None


def _looks_like_json(text: str) -> bool:
    stripped = text.strip()
    return stripped.startswith(("{", "[", "```json", "```JSON")) or (
        stripped.startswith("```") and "{" in stripped[:20]
    )


def _labelled(plain: str, text: str) -> str | None:
    """The verdict the reply labels ("Verdict: no", "Final answer: yes"), if it labels one.

    Every labelled verdict must name one option, and labelled verdicts must agree (a final
    one settles a disagreement): "Verdict: yes|no" or "Verdict: yes ... Verdict: no" hedges."""
    matches = list(_LABELLED_RE.finditer(plain))
    for m in matches:
        named = options_named(plain[m.start(2) :], _YES_NO_OPTION_RE)
        if len(named) > 1:
            raise hedge(named, text)
    words = [m.group(2).lower() for m in matches]
    finals = {m.group(2).lower() for m in matches if m.group("final")}
    if len(set(words)) > 1 and len(finals) != 1:
        raise hedge(list(dict.fromkeys(words)), text)
    return (finals.pop() if finals else words[-1]) if words else None


def parse_yes_no(text: str) -> str:
    """Read a yes/no verdict from JSON ({"answer": ...}) or prose ("Yes.", "**Verdict:** no").

    A reply that looks like JSON but does not parse (malformed) is unparseable: its prose may
    well contain "yes" or "no" that are not the verdict. A reply that names both as its verdict
    ("yes or no", "Verdict: yes|no", the template echoed back) hedges: unparseable too.
    """
    if not isinstance(text, str) or not text.strip():
        raise UnparseableReply("empty reply", raw=text if isinstance(text, str) else None)
    try:
        data = extract_json(text)
    except UnparseableReply:
        if _looks_like_json(text):
            raise UnparseableReply("malformed JSON reply", raw=clip(text)) from None
        data = None
    if isinstance(data, dict):
        for key in ("answer", "verdict", "Answer", "Verdict", "result"):
            value = data.get(key)
            if isinstance(value, str) and (word := _yes_no_word(value, text)):
                return str(word)
            if isinstance(value, bool):
                return "yes" if value else "no"
    if data is not None:
        raise UnparseableReply("JSON reply has no yes/no answer field", raw=clip(text))
    plain = text.replace("*", "").replace("_", " ").replace("`", "")
    if (labelled := _labelled(plain, text)) is not None:
        return labelled
    first_clause = re.split(r"[.,;:!?\n]", plain.strip(), maxsplit=1)[0]
    if (word := _yes_no_word(plain, text)) and len(_WORD_RE.findall(first_clause)) == 1:
        return word
    words = {str(w).lower() for w in _WORD_RE.findall(plain)}
    if len(words) == 1:
        return words.pop()
    why = "both yes and no appear" if words else "no yes/no verdict found"
    raise UnparseableReply(f"could not read a yes/no verdict: {why}", raw=clip(text))


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
    rubric = fitted(RubricReply, data, "rubric reply", text)
    if not rubric.questions:
        raise UnparseableReply("rubric reply has no questions", raw=clip(text))
    return rubric


ParsedRubric = tuple[list[str], list[Question]]  # (the prompt's keywords, its questions)


def _image_questions(reply: RubricReply) -> list[Question]:
    return [
        Question(
            question=q.question,
            expected=q.answer,
            tag=q.tag,
            keywords=q.keywords,
            justification=q.justification,
        )
        for q in reply.questions
    ]


def parse_image_rubric(text: str) -> ParsedRubric:
    reply = parse_rubric(text)
    return reply.keywords, _image_questions(reply)


class BatchVerdictItem(BaseModel):
    question_id: int
    explanation: str
    answer: Literal["yes", "no"]


class BatchVerdictReply(BaseModel):
    """Schema for the batched validator: one answer per numbered question."""

    answers: list[BatchVerdictItem]
