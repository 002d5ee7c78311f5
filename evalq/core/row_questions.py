"""A row's own questions (Gecko's `questions` column), read into what the validator answers. Each
question is one judge call per judge, so the loader bounds how many a row may hold
(evalq.core.dataset)."""

from __future__ import annotations

import json
from typing import Any

from evalq.core.errors import InputError
from evalq.core.models import Question
from evalq.core.parsing_choice import choice_text, label_choices, letters_for

_YES = frozenset({"yes", "y", "true"})
_NO = frozenset({"no", "n", "false"})
MAX_QUESTION_CHOICES = 10  # a) .. j)


def yes_no_answer(value: Any) -> str | None:
    """ "yes"/"no" from the spellings people write (Yes, true, y, no, False, n), else None."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, str):
        return None
    word = value.strip().strip(".!").strip().lower()
    return "yes" if word in _YES else "no" if word in _NO else None


def _is_yes_no(choices: list[str]) -> bool:
    return len(choices) == 2 and {yes_no_answer(c) for c in choices} == {"yes", "no"}


def _choice_answer(answer: str, choices: list[str]) -> str | None:
    """The letter an expected answer names: a choice's own text first, then a letter label."""
    letters = letters_for(choices)
    wanted = {" ".join(text.lower().split()) for text in (answer, choice_text(answer))} - {""}
    by_text = [
        letter
        for letter, choice in zip(letters, choices, strict=False)
        if " ".join(choice_text(choice).lower().split()) in wanted
    ]
    if len(by_text) == 1:
        return by_text[0]
    label = answer.strip().strip("()[]").rstrip(").:").strip().lower()
    return label if len(label) == 1 and label in letters else None


def human_answer(item: dict[str, Any], expected_form: list[str]) -> tuple[str | None, str | None]:
    """A rater's answer to the question (its `human` field), as (label, None) in the form of
    the expected answer (yes/no, or a choice's letter), or (None, why it was left out). A bad
    answer never refuses the row: only the agreement figures leave it out."""
    value = item.get("human")
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, None
    shown = repr(value)
    if expected_form == ["yes", "no"]:
        word = yes_no_answer(value)
        return (word, None) if word else (None, f"human {shown} is not yes or no")
    if isinstance(value, str) and (letter := _choice_answer(value, expected_form)):
        return letter, None
    return None, f"human {shown} is not one of its choices nor a choice's letter"


def _checked_choices(value: Any, row_id: str, where: str, shown: str, most: int) -> list[str]:
    """Two to ``most`` distinct, non-empty choices, labelled a), b), ..."""
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise InputError(row_id, f"{where}.choices", f"{shown}: must be a list of strings")
    texts = [" ".join(choice_text(c).lower().split()) for c in value]
    if not 2 <= len(value) <= most:
        problem = f"needs 2 to {most} choices, got {len(value)}"
    elif not all(texts) or len(set(texts)) != len(texts):
        problem = "choices must be distinct and non-empty"
    else:
        return label_choices(value)
    raise InputError(row_id, f"{where}.choices", f"{shown}: {problem}")


def parse_questions(
    value: Any,
    row_id: str,
    *,
    choices_required: bool = False,
    max_choices: int = MAX_QUESTION_CHOICES,
) -> list[Question] | None:
    """A row's own questions [{question, answer, tag?, choices?, keywords?, human?}] (a JSON
    string in CSV), made into what the validator can answer, or refused naming row, question
    and field. `human` is a rater's answer, read like `answer` but never refusing the row.

    Without choices (or with yes and no as the choices) a question is yes/no and its answer is
    normalised from the usual spellings. With other choices it is multiple choice: the choices
    are labelled a), b), ... and the answer, given as a choice's text or its letter, becomes
    that letter. ``choices_required``: every question must be multiple choice (video)."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):  # not JSON, or nested past what it reads
            raise InputError(row_id, "questions", "not a JSON list") from None
    if not isinstance(value, list) or not value:
        raise InputError(row_id, "questions", "must be a non-empty list of {question, answer, tag}")
    out = []
    for i, item in enumerate(value):
        where = f"questions[{i}]"
        if not isinstance(item, dict):
            raise InputError(row_id, where, "must be an object with question, answer, tag")
        question, answer = item.get("question"), item.get("answer")
        if not isinstance(question, str) or not question.strip():
            raise InputError(row_id, f"{where}.question", "missing or empty")
        shown = f"question {i} {question.strip()!r}"
        if isinstance(answer, bool):
            answer = "yes" if answer else "no"
        if not isinstance(answer, str) or not answer.strip():
            raise InputError(row_id, f"{where}.answer", f"{shown}: missing or empty")
        choices = item.get("choices")
        if choices is None and choices_required:
            raise InputError(row_id, f"{where}.choices", f"{shown}: must be a list of choices")
        if choices is None or (
            not choices_required and isinstance(choices, list) and _is_yes_no(choices)
        ):
            expected = yes_no_answer(answer)
            if expected is None:
                raise InputError(
                    row_id,
                    f"{where}.answer",
                    f"{shown}: {answer!r} is not yes or no (write yes/no, true/false or y/n, "
                    "or give the question choices)",
                )
            choices = ["yes", "no"]
        else:
            choices = _checked_choices(choices, row_id, where, shown, max_choices)
            letter = _choice_answer(answer, choices)
            if letter is None:
                raise InputError(
                    row_id,
                    f"{where}.answer",
                    f"{shown}: {answer!r} is not one of its choices ({'; '.join(choices)}) "
                    "nor a choice's letter",
                )
            expected = letter
        keywords = item.get("keywords", [])
        if not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
            raise InputError(row_id, f"{where}.keywords", f"{shown}: must be a list of strings")
        tag = item.get("tag", "other")
        human, human_error = human_answer(item, choices)
        out.append(
            Question(
                question=question.strip(),
                expected=expected,
                tag=str(tag).strip().lower() or "other",
                choices=choices,
                keywords=[k.strip() for k in keywords if k.strip()],
                justification=str(item.get("justification", "")),
                source="dataset",
                human=human,
                human_error=None if human_error is None else f"{where}: {human_error}",
            )
        )
    return out


def question_items(questions: list[Question]) -> list[dict[str, Any]]:
    """Questions written back in the form parse_questions reads (a dataset's `questions`
    column): question, answer, tag, keywords and justification, and choices for a multiple
    choice question (a yes/no one has none). Read back, they are the same questions."""
    items: list[dict[str, Any]] = []
    for q in questions:
        item: dict[str, Any] = {"question": q.question, "answer": q.expected, "tag": q.tag}
        if not _is_yes_no(list(q.choices)):
            item["choices"] = list(q.choices)
        if q.keywords:
            item["keywords"] = list(q.keywords)
        if q.justification:
            item["justification"] = q.justification
        if q.weight != 1.0:  # an importance (the rubric metric's tests)
            item["weight"] = q.weight
        items.append(item)
    return items
