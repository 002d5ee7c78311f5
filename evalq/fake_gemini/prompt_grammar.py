"""How the fake reads evalq's prompts, written down apart from the code that writes them: with
evalq's own helpers, a format bug would be read back the same wrong way on both sides and every
test would still pass."""

from __future__ import annotations

import re

# The block kinds the skills read, by the metric whose prompts carry them.
IMAGE_DESCRIPTION = "image_description"  # gecko rubric
QUESTION = "question"  # gecko validator (one yes/no or multiple-choice question)
QUESTIONS = "questions"  # gecko batched validator, numbered
CHOICES = "choices"  # the labelled choices of a multiple-choice question
MISSING_KEYWORDS = "missing_keywords"  # a rubric re-ask for keywords left uncovered
VIDEO_DESCRIPTION = "video_description"  # gecko video rubric
VIDEO_QUESTION = "video_question"  # gecko video validator
VIDEO_QUESTIONS = "video_questions"  # gecko video batched validator, numbered
QUERY = "query"  # groundedness judge
CONTEXT = "context"
RESPONSE = "response"
UNLABELLED_SENTENCES = "unlabelled_sentences"  # a groundedness re-ask
RUBRIC_PROMPT = "rubric_prompt"  # rubric metric: the text prompt tests are written for
RUBRIC_RESPONSE = "rubric_response"  # rubric metric validator: the response checked
RUBRIC_TEST = "rubric_test"  # rubric metric validator: one test
RUBRIC_TESTS = "rubric_tests"  # rubric metric batched validator, numbered

_BLOCK_RE = re.compile(
    r"<untrusted-(?P<code>[0-9a-f]{16}) kind=(?P<kind>[A-Za-z0-9_]+)>\n"
    r"(?P<body>.*?)\n</untrusted-(?P=code)>",
    re.DOTALL,
)
_METRIC_RE = re.compile(r"^# Metric: (?P<name>.+)$", re.MULTILINE)

# The groundedness metric's guidance to the model under test, as evalq sends it.
GROUNDED_ANSWER_GUIDANCE = """Answer the user's request from the context that comes with it, and from
nothing else. Use only what the context states: add no facts from memory or elsewhere, and if
the context does not hold the answer, say so plainly. Write at most five sentences of plain
prose."""


def blocks(text: str) -> list[tuple[str, str]]:
    """Every untrusted block as (kind, body), in order."""
    return [(m["kind"], m["body"]) for m in _BLOCK_RE.finditer(text)]


def block(text: str, kind: str) -> str | None:
    """The body of the first block of a kind, or None."""
    return next((body for found, body in blocks(text) if found == kind), None)


def blocks_by_kind(text: str) -> dict[str, str]:
    """Every block's body by kind (the first one of each kind)."""
    found: dict[str, str] = {}
    for kind, body in blocks(text):
        found.setdefault(kind, body)
    return found


def is_plain(text: str) -> bool:
    """No untrusted block: not one of evalq's judge prompts."""
    return not blocks(text)


def metric_name(text: str) -> str | None:
    """The metric a rating prompt names in its ``# Metric:`` line, or None."""
    m = _METRIC_RE.search(text)
    return m["name"] if m else None


def shows_field(text: str, name: str) -> bool:
    """Whether a prompt without a response schema shows a JSON field of this name."""
    return f'"{name}"' in text


def is_grounded_answer_guidance(system: str) -> bool:
    """The groundedness metric's guidance to the model under test."""
    return system == GROUNDED_ANSWER_GUIDANCE
