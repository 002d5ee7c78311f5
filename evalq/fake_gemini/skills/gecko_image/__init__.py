"""The simulated judge's Gecko image skill: rubrics from a description, verdicts from pixels;
the brain's last resort, asked after every other skill."""

from __future__ import annotations

from evalq.fake_gemini.prompt_grammar import (
    CHOICES,
    IMAGE_DESCRIPTION,
    MISSING_KEYWORDS,
    QUESTION,
    block,
)
from evalq.fake_gemini.protocol import FakeRequest, SeesImages, schema_properties
from evalq.fake_gemini.skills.gecko_image.choices import answer_choice_question, choice_reply
from evalq.fake_gemini.skills.gecko_image.rubric import fill_gap, write_rubric
from evalq.fake_gemini.skills.gecko_image.verdicts import answer_question
from evalq.fake_gemini.skills.gecko_image.vocabulary import LABEL


def answer(request: FakeRequest, judge: SeesImages) -> str:
    kind = _request_kind(request)
    if kind == "rubric request":
        rubric = write_rubric(_description(request.text))
        if (missing := block(request.text, MISSING_KEYWORDS)) is not None:
            rubric = fill_gap(rubric, missing.splitlines())
        return rubric.model_dump_json()
    if kind == "verdict" and (choices := block(request.text, CHOICES)):
        letter, why = answer_choice_question(
            _question_text(request.text),
            [line for line in choices.splitlines() if line.strip()],
            judge.scene_for(request.media),
        )
        return choice_reply(letter, why, structured=request.response_schema is not None)
    if kind == "verdict":
        verdict = answer_question(_question_text(request.text), judge.scene_for(request.media))
        if request.response_schema is None:
            return f"{verdict.explanation}\nVerdict: {verdict.answer}"
        return verdict.model_dump_json()
    return f"{LABEL} I only write Gecko rubrics and answer Gecko validator questions."


def _request_kind(request: FakeRequest) -> str:
    """Rubric, verdict or other: the response schema decides first, then the prompt's blocks."""
    properties = schema_properties(request.response_schema)
    if {"keywords", "questions"} <= properties:
        return "rubric request"
    if "answer" in properties:
        return "verdict"
    if block(request.text, IMAGE_DESCRIPTION) is not None:
        return "rubric request"
    if block(request.text, QUESTION) is not None:
        return "verdict"
    return "other"


def _description(text: str) -> str:
    section = block(text, IMAGE_DESCRIPTION)
    if section is not None:
        return section
    _, marker, after = text.rpartition("Image description:")
    return after if marker else text


def _question_text(text: str) -> str:
    section = block(text, QUESTION)
    if section is not None:
        return section
    _, marker, after = text.rpartition("Question:")
    if marker:
        return after.strip().splitlines()[0] if after.strip() else ""
    asked = [line for line in text.splitlines() if line.strip().endswith("?")]
    return asked[-1] if asked else text
