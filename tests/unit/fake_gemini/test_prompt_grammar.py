"""The fake's prompt grammar against the prompts evalq actually sends: each is built here with
evalq's own builders (the fake itself may not import them), and the grammar must read every
section the fake's skills need. A prompt whose markers drift must then not be read, so a
format change on evalq's side fails here rather than passing on both sides unnoticed."""

from __future__ import annotations

import re

import pytest

from evalq.core.models import Question
from evalq.fake_gemini import prompt_grammar as grammar
from evalq.fake_gemini.messages import read_message
from evalq.fake_gemini.skills.gecko_video.choices import numbered_questions
from evalq.metrics.gecko.prompts import (
    RubricGap,
    batch_validator_prompt,
    choice_validator_prompt,
    rubric_prompt,
    validator_prompt,
)
from evalq.metrics.gecko_video.prompts import (
    video_batch_validator_prompt,
    video_rubric_prompt,
    video_validator_prompt,
)
from evalq.metrics.groundedness.prompts import answer_request, judge_gap_prompt, judge_prompt
from evalq.metrics.ranking.prompts import generation_request
from evalq.metrics.ratings.prompts import pairwise_prompt, pointwise_prompt
from evalq.metrics.ratings.templates import resolve_template

DESCRIPTION = "a red circle to the left of a blue square"
VIDEO_DESCRIPTION = "a red circle moving from left to right"
QUERY = "How deep is the lake?"
CONTEXT = "The lake is 40 m deep. It freezes in winter."
RESPONSE = "The lake is 40 m deep. I hope this helps."


def test_gecko_image_rubric_and_its_re_ask() -> None:
    first = rubric_prompt(DESCRIPTION)
    assert grammar.block(first, grammar.IMAGE_DESCRIPTION) == DESCRIPTION
    assert grammar.block(first, grammar.MISSING_KEYWORDS) is None
    asked = [Question(question="Is there a red circle?", expected="yes", keywords=["red"])]
    again = rubric_prompt(DESCRIPTION, RubricGap(asked=asked, missing=["blue", "square"]))
    assert grammar.block(again, grammar.IMAGE_DESCRIPTION) == DESCRIPTION
    assert grammar.block(again, grammar.MISSING_KEYWORDS) == "blue\nsquare"


def test_gecko_image_validators() -> None:
    question = "Is the circle red?"
    assert grammar.block(validator_prompt(question), grammar.QUESTION) == question
    choice = choice_validator_prompt("What colour is the circle?", ["a) red", "b) blue"])
    assert grammar.block(choice, grammar.QUESTION) == "What colour is the circle?"
    assert grammar.block(choice, grammar.CHOICES) == "a) red\nb) blue"
    batch = batch_validator_prompt(["Is there a circle?", "Is it red?"])
    assert grammar.block(batch, grammar.QUESTIONS) == "1. Is there a circle?\n2. Is it red?"


def test_gecko_video_rubric_and_validators() -> None:
    first = video_rubric_prompt(VIDEO_DESCRIPTION)
    assert grammar.block(first, grammar.VIDEO_DESCRIPTION) == VIDEO_DESCRIPTION
    asked = [Question(question="What does the circle do?", expected="a", keywords=["moving"])]
    again = video_rubric_prompt(VIDEO_DESCRIPTION, RubricGap(asked=asked, missing=["red"]))
    assert grammar.block(again, grammar.MISSING_KEYWORDS) == "red"
    one = video_validator_prompt("What colour is the circle?", ["red", "blue"])
    assert grammar.block(one, grammar.VIDEO_QUESTION) == "What colour is the circle?"
    assert (grammar.block(one, grammar.CHOICES) or "").splitlines() == ["a) red", "b) blue"]
    questions = [
        Question(question="What colour is the circle?", expected="a", choices=["red", "blue"]),
        Question(question="What does it do?", expected="b", choices=["grows", "moves"]),
    ]
    listed = grammar.block(video_batch_validator_prompt(questions), grammar.VIDEO_QUESTIONS)
    assert numbered_questions(listed or "") == [
        (1, "What colour is the circle?", ["a) red", "b) blue"]),
        (2, "What does it do?", ["a) grows", "b) moves"]),
    ]


def test_groundedness_judge_and_its_re_ask() -> None:
    prompt = judge_prompt(QUERY, CONTEXT, RESPONSE)
    assert grammar.block(prompt, grammar.QUERY) == QUERY
    assert grammar.block(prompt, grammar.CONTEXT) == CONTEXT
    assert grammar.block(prompt, grammar.RESPONSE) == RESPONSE
    assert grammar.shows_field(prompt, "no_rad")
    again = judge_gap_prompt(QUERY, CONTEXT, RESPONSE, ["I hope this helps."])
    assert grammar.block(again, grammar.UNLABELLED_SENTENCES) == "I hope this helps."


def test_groundedness_answer_request_to_the_model_under_test() -> None:
    request = answer_request(QUERY, CONTEXT)
    assert grammar.is_grounded_answer_guidance(request.system_instruction or "")
    assert grammar.is_plain(request.prompt)
    message = read_message(request.prompt)
    assert (message.query, message.source) == (QUERY, CONTEXT)


def test_pointwise_rating_prompt() -> None:
    template = resolve_template({"template": "question_answering_quality"}, "pointwise")
    values = {"prompt": QUERY, "context": CONTEXT, "reference": "40 m", "response": RESPONSE}
    prompt = pointwise_prompt(template, values)
    assert grammar.blocks_by_kind(prompt) == values
    assert grammar.metric_name(prompt) == "Question answering quality"
    assert grammar.shows_field(prompt, "rating")


def test_pairwise_rating_prompt() -> None:
    template = resolve_template({}, "pairwise")
    prompt = pairwise_prompt(template, {"prompt": QUERY}, "first answer", "second answer")
    blocks = grammar.blocks_by_kind(prompt)
    assert blocks == {"prompt": QUERY, "response_a": "first answer", "response_b": "second answer"}
    assert grammar.metric_name(prompt) == "Question answering quality"
    assert grammar.shows_field(prompt, "pairwise_choice")


def test_ranking_candidate_request() -> None:
    guidance = "Answer in one sentence."
    request = generation_request(guidance, {"prompt": QUERY, "context": CONTEXT}, None)
    assert request.system_instruction == guidance
    assert not grammar.is_grounded_answer_guidance(request.system_instruction)
    assert grammar.is_plain(request.prompt)
    message = read_message(request.prompt)
    assert (message.query, message.source) == (QUERY, CONTEXT)


# ---- drift: a changed marker is not read ------------------------------------------------------

DRIFTS = {
    "opening tag renamed": ("<untrusted-", "<fenced-"),
    "closing tag renamed": ("</untrusted-", "</fenced-"),
    "kind attribute renamed": (" kind=", " type="),
    "body on the tag's line": (">\n", ">"),
}


@pytest.mark.parametrize("drift", DRIFTS.values(), ids=list(DRIFTS))
def test_a_block_whose_marker_drifts_is_not_read(drift: tuple[str, str]) -> None:
    old, new = drift
    prompts = {
        grammar.IMAGE_DESCRIPTION: rubric_prompt(DESCRIPTION),
        grammar.QUESTION: validator_prompt("Is the circle red?"),
        grammar.VIDEO_DESCRIPTION: video_rubric_prompt(VIDEO_DESCRIPTION),
        grammar.CONTEXT: judge_prompt(QUERY, CONTEXT, RESPONSE),
    }
    for kind, prompt in prompts.items():
        assert grammar.block(prompt, kind) is not None
        drifted = prompt.replace(old, new)
        assert drifted != prompt
        assert grammar.block(drifted, kind) is None, kind
        assert grammar.is_plain(drifted)


def test_a_block_whose_code_differs_between_its_tags_is_not_read() -> None:
    prompt = validator_prompt("Is the circle red?")
    opening = re.search(r"<untrusted-(?P<code>[0-9a-f]{16}) kind=question>", prompt)
    assert opening is not None
    code = opening["code"]
    forged = prompt.replace(f"</untrusted-{code}>", f"</untrusted-{'0' * 16}>")
    assert grammar.block(forged, grammar.QUESTION) is None


def test_a_renamed_metric_heading_or_guidance_is_not_read() -> None:
    template = resolve_template({"template": "question_answering_quality"}, "pointwise")
    prompt = pointwise_prompt(template, {"prompt": QUERY, "response": RESPONSE})
    assert grammar.metric_name(prompt.replace("# Metric: ", "# Measure: ")) is None
    guidance = answer_request(QUERY, CONTEXT).system_instruction or ""
    assert not grammar.is_grounded_answer_guidance(guidance.replace("context", "sources"))


def test_text_rubric_writer_and_validators() -> None:
    from evalq.metrics.rubric import prompts as rubric

    written = rubric.rubric_prompt("Test the facts.", QUERY)
    assert grammar.block(written, grammar.RUBRIC_PROMPT) == QUERY
    assert grammar.block(written, grammar.RUBRIC_RESPONSE) is None
    texts = {"prompt": QUERY, "context": CONTEXT, "response": RESPONSE}
    one = rubric.validator_prompt(texts, "The response gives a depth.")
    assert grammar.block(one, grammar.RUBRIC_RESPONSE) == RESPONSE
    assert grammar.block(one, grammar.RUBRIC_TEST) == "The response gives a depth."
    tests = ["The response gives a depth.", "The response is short."]
    batch = rubric.batch_validator_prompt(texts, tests)
    assert grammar.block(batch, grammar.RUBRIC_TESTS) == "1. " + tests[0] + "\n2. " + tests[1]
