"""Reading Gecko-video judge replies: the reply schemas, the rubric reply (typed keywords and
multiple-choice questions, in our form or the Gecko papers') and a validator's letter. A reply
that can't be read raises UnparseableReply, so it becomes unscored, never a 0.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from evalq.core.errors import UnparseableReply
from evalq.core.models import Question
from evalq.core.parsing_choice import choice_text, label_choices, letters_for, parse_letter
from evalq.core.replies import extract_json
from evalq.metrics.gecko.parsing import ParsedRubric

KeywordType = Literal[
    "entity",
    "object",
    "attribute",
    "action",
    "color",
    "spatial relation",
    "temporal relation",
    "style",
    "scene",
    "other",
]
KEYWORD_TYPES: tuple[str, ...] = KeywordType.__args__  # type: ignore[attr-defined]
Letter = Literal["a", "b", "c", "d"]
MAX_CHOICES = 4
MIN_CHOICES = 2

# Types judges write that mean one of ours.
_TYPE_ALIASES = {
    "colour": "color",
    "spatial": "spatial relation",
    "spatial_relation": "spatial relation",
    "location": "spatial relation",
    "position": "spatial relation",
    "temporal": "temporal relation",
    "temporal_relation": "temporal relation",
    "time": "temporal relation",
    "motion": "action",
    "activity": "action",
    "movement": "action",
    "human": "entity",
    "person": "entity",
    "animal": "entity",
    "character": "entity",
    "counting": "attribute",
    "count": "attribute",
    "size": "attribute",
    "shape": "attribute",
    "material": "attribute",
    "background": "scene",
    "setting": "scene",
    "place": "scene",
    "camera": "style",
    "perspective": "style",
    "vibe": "style",
    "mood": "style",
}


class VideoKeywordReply(BaseModel):
    keyword: str
    type: KeywordType


class VideoQuestionReply(BaseModel):
    keywords: list[str]
    question: str
    choices: list[str]
    answer: Letter
    justification: str


class VideoRubricReply(BaseModel):
    """Schema for video rubric generation: typed keywords, one lettered question per keyword."""

    keywords: list[VideoKeywordReply]
    questions: list[VideoQuestionReply]


class ChoiceVerdictReply(BaseModel):
    """Schema for the video validator: reasoning first, then the letter."""

    explanation: str
    answer: Letter


class BatchChoiceItem(BaseModel):
    question_id: int
    explanation: str
    answer: Letter


class BatchChoiceReply(BaseModel):
    """Schema for the batched video validator: one letter per numbered question."""

    answers: list[BatchChoiceItem]


def keyword_type(value: Any) -> str:
    """One of our types; the usual synonyms mapped, anything else "other"."""
    if not isinstance(value, str):
        return "other"
    text = value.strip().lower().replace("-", " ")
    text = _TYPE_ALIASES.get(text, _TYPE_ALIASES.get(text.replace(" ", "_"), text))
    return text if text in KEYWORD_TYPES else "other"


_SEED_KEYWORD_RE = re.compile(r"(?:\{(?P<id>\d+)\})?\s*\[(?P<body>[^\]]+)\]")


def _keywords(value: Any) -> list[tuple[int, str, str]]:
    """(id, keyword, type) from a list of objects, "[text, type, weight]" strings, or the
    "{1}[text, type, 1.0] ..." string the Gecko papers use; ids are 1-based."""
    items: list[Any]
    if isinstance(value, str):
        items = [m.group(0) for m in _SEED_KEYWORD_RE.finditer(value)] or [value]
    elif isinstance(value, list):
        items = value
    else:
        return []
    out: list[tuple[int, str, Any]] = []
    for position, item in enumerate(items, start=1):
        if isinstance(item, dict):
            text = item.get("keyword", item.get("text", item.get("name")))
            kind = item.get("type", item.get("tag"))
            number = item.get("id", position)
        elif isinstance(item, str) and (m := _SEED_KEYWORD_RE.fullmatch(item.strip())):
            text, kind, *_ = [*(p.strip() for p in m.group("body").split(",")), None]
            number = int(m.group("id")) if m.group("id") else position
        else:
            text, kind, number = item, None, position
        if isinstance(text, str) and text.strip():
            out.append((int(number) if isinstance(number, int) else position, text.strip(), kind))
    return [(n, text, keyword_type(kind)) for n, text, kind in out]


def _question_keywords(item: dict[str, Any], by_id: dict[int, str]) -> list[str]:
    named = item.get("keywords", item.get("keyword"))
    if isinstance(named, str):
        named = [named]
    if isinstance(named, list) and all(isinstance(k, str) for k in named) and named:
        return [str(k) for k in named]
    ids: list[int] = []
    for key in ("keyword_ids", "keyword_id", "keywords"):
        value = item.get(key)
        if isinstance(value, int):
            ids.append(value)
        elif isinstance(value, list):
            ids += [v for v in value if isinstance(v, int)]
    if not ids:  # the papers' style: "... ({3}) ..." in the justification
        ids = [int(n) for n in re.findall(r"\{(\d+)\}", str(item.get("justification", "")))]
    return [by_id[i] for i in ids if i in by_id]


def _checked_choices(choices: Any) -> list[str]:
    """Two to four distinct, non-empty choices, labelled a) .. d); else ValueError."""
    if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        raise ValueError("choices must be a list of strings")
    if not MIN_CHOICES <= len(choices) <= MAX_CHOICES:
        raise ValueError(f"needs {MIN_CHOICES} to {MAX_CHOICES} choices, got {len(choices)}")
    texts = [choice_text(c).lower() for c in choices]
    if not all(texts) or len(set(texts)) != len(texts):
        raise ValueError("choices must be distinct and non-empty")
    return label_choices(choices)


def _question(item: Any, by_id: dict[int, str], types: dict[str, str]) -> Question:
    if not isinstance(item, dict):
        raise ValueError("a question must be an object")
    text = item.get("question")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("question text missing")
    choices = _checked_choices(item.get("choices"))
    answer = item.get("answer")
    try:
        letter = parse_letter(str(answer), choices) if answer is not None else None
    except UnparseableReply:
        letter = None
    if letter is None:
        raise ValueError(f"answer {answer!r} is not one of the letters {letters_for(choices)}")
    keywords = _question_keywords(item, by_id)
    tag = keyword_type(item.get("type", item.get("tag")))
    if tag == "other" and keywords:
        tag = types.get(keywords[0].strip().lower(), "other")
    return Question(
        question=text.strip(),
        expected=letter,
        tag=tag,
        choices=choices,
        keywords=keywords,
        justification=str(item.get("justification", "")),
    )


def parse_video_rubric(text: str) -> ParsedRubric:
    """Keywords and multiple-choice questions from a rubric reply; a malformed question is
    dropped (its keyword then counts as uncovered and is asked again), none at all is an error."""
    data = extract_json(text)
    if not isinstance(data, dict):
        raise UnparseableReply("rubric reply is not a JSON object", raw=text[:4000])
    keywords = _keywords(data.get("keywords"))
    by_id = {n: k for n, k, _ in keywords}
    types = {k.lower(): t for _, k, t in keywords}
    items = data.get("questions", data.get("qas"))
    if not isinstance(items, list) or not items:
        raise UnparseableReply("rubric reply has no questions", raw=text[:4000])
    questions: list[Question] = []
    problems: list[str] = []
    for index, item in enumerate(items):
        try:
            questions.append(_question(item, by_id, types))
        except (ValueError, ValidationError) as exc:
            problems.append(f"questions[{index}]: {exc}")
    if not questions:
        raise UnparseableReply(f"no usable question: {'; '.join(problems)}", raw=text[:4000])
    return [k for _, k, _ in keywords], questions


def parse_choice_answer(text: str, question: Question) -> str:
    return parse_letter(text, question.choices)
