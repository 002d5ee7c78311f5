"""Reading the rubric metric's tests: the rubric model's reply, and a row's own tests in the
forms people hold them (plain statements, dicts, or Vertex's rubric groups as its SDK writes
them: content.property.description, importance HIGH/MEDIUM/LOW, type)."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel

from evalq.core.errors import InputError, UnparseableReply
from evalq.core.models import Question
from evalq.core.replies import clip, extract_json, fitted
from evalq.metrics.gecko.parsing import ParsedRubric
from evalq.metrics.rubric.prompts import IMPORTANCES, TEST_TAGS

MAX_ROW_TESTS = 100
DEFAULT_IMPORTANCE = "medium"  # a test given without one weighs as a medium one


class TestReply(BaseModel):
    test: str
    tag: Literal["content", "instruction_following", "format", "style", "safety", "other"]
    importance: Literal["high", "medium", "low"]
    justification: str


class TextRubricReply(BaseModel):
    """Schema for the rubric model: the prompt's pass/fail tests."""

    tests: list[TestReply]


def tag_of(value: Any) -> str:
    """A test's tag: one of TEST_TAGS as written, else the given type lower-cased (Vertex's
    types are the user's to name), else "other"."""
    if not isinstance(value, str) or not value.strip():
        return "other"
    tag = "_".join(value.strip().lower().replace("-", " ").split())
    return tag if tag in TEST_TAGS else tag[:60]


def weight_of(value: Any) -> float | None:
    """An importance's weight: high 2, medium 1, low 0.5 (any case, Vertex's IMPORTANCE_ prefix
    allowed), or a positive number as given; None for anything else."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return IMPORTANCES[DEFAULT_IMPORTANCE]
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if value > 0 else None
    if isinstance(value, str):
        word = value.strip().lower().removeprefix("importance_")
        if word == "unspecified":
            return IMPORTANCES[DEFAULT_IMPORTANCE]
        return IMPORTANCES.get(word)
    return None


def _test(text: str, tag: Any, importance: Any, justification: str = "") -> Question | None:
    weight = weight_of(importance)
    if not text.strip() or weight is None:
        return None
    return Question(
        question=" ".join(text.split()),
        expected="yes",
        tag=tag_of(tag),
        weight=weight,
        justification=justification,
    )


def parse_text_rubric(text: str) -> ParsedRubric:
    """The rubric model's tests; no keywords (a text's tests cover no keyword list)."""
    data = extract_json(text)
    if isinstance(data, dict) and isinstance(data.get("tests"), list):
        for item in data["tests"]:
            if isinstance(item, dict):
                item["tag"] = tag_of(item.get("tag"))
                if isinstance(item.get("importance"), str):
                    item["importance"] = item["importance"].strip().lower()
                item.setdefault("justification", "")
    reply = fitted(TextRubricReply, data, "rubric reply", text)
    tests = [_test(t.test, t.tag, t.importance, t.justification) for t in reply.tests]
    kept = [t for t in tests if t is not None]
    if not kept:
        raise UnparseableReply("rubric reply has no tests", raw=clip(text))
    return [], kept


# ---- a row's own tests ----


def _description(item: dict[str, Any]) -> Any:
    """A test's text: Vertex's content.property.description, or a plain key."""
    content = item.get("content")
    if isinstance(content, dict):
        prop = content.get("property")
        if isinstance(prop, dict) and "description" in prop:
            return prop["description"]
        if "description" in content:
            return content["description"]
    for key in ("test", "description", "question", "text", "rubric"):
        if key in item:
            return item[key]
    return None


def _items(value: Any) -> list[Any]:
    """The rubrics of a cell: a list of them, one group ({"rubrics": [...]}), or Vertex's
    rubric_groups (group name -> group), every group's rubrics in order."""
    if isinstance(value, list):
        out: list[Any] = []
        for item in value:
            out += _items(item) if isinstance(item, dict) and "rubrics" in item else [item]
        return out
    if isinstance(value, dict):
        if "rubrics" in value:
            return _items(value["rubrics"])
        if all(isinstance(v, dict | list) for v in value.values()):
            return [item for group in value.values() for item in _items(group)]
    raise ValueError("expected a list of tests, a rubric group or rubric groups")


def row_tests(value: Any, row_id: str, field: str = "rubrics") -> list[Question] | None:
    """A row's own tests, or None for an empty cell; a cell that is not tests fails the row
    (input_error) naming the field and the test."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise InputError(
                row_id, field, "must be JSON: a list of tests or rubric groups"
            ) from None
    try:
        items = _items(value)
    except ValueError as exc:
        raise InputError(row_id, field, str(exc)) from None
    tests: list[Question] = []
    for number, item in enumerate(items, start=1):
        test: Question | None
        if isinstance(item, str):
            test = _test(item, None, None)
        elif isinstance(item, dict):
            text = _description(item)
            tag = item.get("tag", item.get("type"))
            importance = item.get("importance", item.get("weight"))
            why = item.get("justification")
            why = why if isinstance(why, str) else ""
            test = _test(text, tag, importance, why) if isinstance(text, str) else None
        else:
            test = None
        if test is None:
            raise InputError(
                row_id,
                field,
                f"test {number} needs a text (test, description or content.property."
                "description) and an importance of high, medium, low or a positive number",
            )
        tests.append(test)
    if len(tests) > MAX_ROW_TESTS:
        raise InputError(row_id, field, f"{len(tests)} tests; at most {MAX_ROW_TESTS}")
    return tests or None
