"""A Gecko judge's rubric reply, written the way the rubric prompts ask for it: the prompt's
keywords and the questions that cover them, yes/no for an image, multiple choice for a video.

Unit tests hand these replies to the in-memory judge; one writer keeps them speaking the reply
format the rubric parser reads (evalq.metrics.gecko)."""

from __future__ import annotations

import json
from typing import Any


def yes_no_question(text: str, keywords: list[str], tag: str = "object") -> dict[str, Any]:
    """A rubric's yes/no question covering `keywords`, answered "yes" for a matching image."""
    return {
        "question": text,
        "answer": "yes",
        "tag": tag,
        "keywords": keywords,
        "justification": "j",
    }


def choice_question(
    text: str, answer: str, choices: list[str], keywords: list[str]
) -> dict[str, Any]:
    """A rubric's multiple-choice question covering `keywords`, `answer` its right choice."""
    return {
        "question": text,
        "choices": choices,
        "answer": answer,
        "keywords": keywords,
        "justification": "j",
    }


def rubric_reply(keywords: list[Any], questions: list[dict[str, Any]]) -> str:
    """The judge's whole rubric: the keywords it read in the prompt, and its questions."""
    return json.dumps({"keywords": keywords, "questions": questions})
