"""Hand-written Gecko questions: yes/no spellings normalised at load, multiple-choice questions
shown with their choices and answered with a letter, anything else refused naming row, question
and field."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from evalq.core.dataset import load_dataset
from evalq.core.errors import InputError, UnparseableReply
from evalq.core.judge import MediaPart
from evalq.core.models import Question
from evalq.core.parsing_choice import parse_letter
from evalq.core.row_questions import parse_questions
from evalq.core.scoring import question_results
from evalq.fake_gemini.brain import SimulatedJudge
from evalq.fake_gemini.protocol import FakeMedia, FakeRequest
from evalq.metrics.gecko import metric as gecko
from evalq.metrics.gecko.choices import (
    ImageChoiceReply,
    MixedBatchReply,
    mixed_batch_validator_prompt,
)
from evalq.metrics.gecko.parsing import BatchVerdictReply
from evalq.metrics.gecko.prompts import choice_validator_prompt
from evalq.metrics.gecko.validation import IMAGE_VALIDATOR
from evalq.metrics.gecko_video.metric import VIDEO_VALIDATOR
from tests.support.datasets import write_rows
from tests.support.images import circle_png
from tests.support.judges import ListJudge
from tests.support.prompts import extract_section

IMAGE = MediaPart(mime_type="image/png", data=b"\x89PNG\r\n\x1a\n")
COLOURS = ["red", "blue", "green"]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("Yes", "yes"),
        ("true", "yes"),
        ("y", "yes"),
        (" YES. ", "yes"),
        (True, "yes"),
        ("no", "no"),
        ("False", "no"),
        ("N", "no"),
        (False, "no"),
    ],
)
def test_yes_no_spellings_are_normalised_at_load(given: Any, expected: str) -> None:
    (q,) = parse_questions([{"question": "Is it red?", "answer": given}], "r1") or []
    assert (q.expected, q.choices) == (expected, ["yes", "no"])


@pytest.mark.parametrize("given", ["maybe", "red", "1", "yes please"])
def test_other_yes_no_answers_are_refused_naming_row_question_and_field(given: str) -> None:
    items = [
        {"question": "Is it round?", "answer": "yes"},
        {"question": "Is it red?", "answer": given},
    ]
    with pytest.raises(InputError) as info:
        parse_questions(items, "r7")
    assert (info.value.row_id, info.value.field) == ("r7", "questions[1].answer")
    assert "Is it red?" in info.value.message
    assert repr(given) in info.value.message


@pytest.mark.parametrize(
    ("given", "letter"),
    [("red", "a"), ("Blue", "b"), ("c", "c"), ("B", "b"), ("(a)", "a"), ("c) green", "c")],
)
def test_multiple_choice_answers_become_the_choice_letter(given: str, letter: str) -> None:
    items = [{"question": "What colour is the circle?", "choices": COLOURS, "answer": given}]
    (q,) = parse_questions(items, "r1") or []
    assert q.choices == ["a) red", "b) blue", "c) green"]
    assert q.expected == letter


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ({"choices": COLOURS, "answer": "purple"}, "questions[0].answer"),
        ({"choices": COLOURS, "answer": "d"}, "questions[0].answer"),
        ({"choices": ["red"], "answer": "red"}, "questions[0].choices"),
        ({"choices": ["red", "Red"], "answer": "red"}, "questions[0].choices"),
        ({"choices": ["red", ""], "answer": "red"}, "questions[0].choices"),
    ],
)
def test_multiple_choice_answers_not_among_the_choices_are_refused(
    item: dict[str, Any], field: str
) -> None:
    with pytest.raises(InputError) as info:
        parse_questions([{"question": "What colour is the circle?", **item}], "r3")
    assert (info.value.row_id, info.value.field) == ("r3", field)
    assert "What colour is the circle?" in info.value.message


def test_a_bad_question_in_a_dataset_fails_its_row_alone(tmp_path: Path) -> None:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), "red").save(buf, format="PNG")
    (tmp_path / "a.png").write_bytes(buf.getvalue())
    rows = [
        {
            "id": "ok",
            "prompt": "p",
            "image": "a.png",
            "questions": [{"question": "q?", "answer": "Y"}],
        },
        {
            "id": "bad",
            "prompt": "p",
            "image": "a.png",
            "questions": [{"question": "q?", "answer": "sure"}],
        },
    ]
    path = tmp_path / "d.jsonl"
    write_rows(path, rows)
    loaded = load_dataset(path, "gecko-image")
    assert [r.id for r in loaded.rows] == ["ok"]
    ((_, error),) = loaded.errors
    assert (error.row_id, error.field) == ("bad", "questions[0].answer")


CHOICE = Question(
    question="What colour is the circle?",
    expected="a",
    tag="color",
    choices=["a) red", "b) blue", "c) green"],
)


def test_the_image_validator_shows_the_choices_and_reads_a_letter() -> None:
    judge = ListJudge([json.dumps({"explanation": "it is red", "answer": "a"})])
    verdict, _ = gecko.validate_question(judge, 0, CHOICE, IMAGE)
    request = judge.requests[0]
    assert extract_section(request.prompt, "question") == "What colour is the circle?"
    assert extract_section(request.prompt, "choices") == "a) red\nb) blue\nc) green"
    assert request.schema is ImageChoiceReply
    assert (verdict.status, verdict.answer) == ("ok", "a")
    results = question_results([CHOICE], {0: verdict})
    assert results[0].result == 1


# A choice question asked of an image (CHOICE: a to c) and of a video (a to d), each with the
# validator its metric asks it with.
ASKED_OF = {
    "image": (CHOICE, IMAGE, IMAGE_VALIDATOR),
    "video": (
        Question(
            question="Colour?", expected="b", choices=["a) blue", "b) red", "c) green", "d) pink"]
        ),
        MediaPart(mime_type="video/avi", data=b"RIFF\0\0\0\0AVI "),
        VIDEO_VALIDATOR,
    ),
}


@pytest.mark.parametrize(
    ("asked_of", "reply", "answer", "reason"),
    [
        ("image", "b) blue", "b", None),
        ("image", "Answer: (c)", "c", None),
        ("image", "yes", None, "parse_error"),
        ("image", "d", None, "parse_error"),
        ("video", "B) red", "b", None),
        ("video", "Answer: (d)", "d", None),
        ("video", "I am not sure", None, "parse_error"),
        ("video", "e", None, "parse_error"),
    ],
)
def test_a_yes_no_or_out_of_range_reply_to_a_choice_question_is_unscored(
    asked_of: str, reply: str, answer: str | None, reason: str | None
) -> None:
    question, media, validator = ASKED_OF[asked_of]
    verdict, _ = gecko.validate_question(ListJudge([reply]), 0, question, media, validator)
    assert (verdict.answer, verdict.reason) == (answer, reason)


def test_a_batch_mixing_yes_no_and_choice_questions_reads_each_its_own_way() -> None:
    questions = [Question(question="Is there a circle?", expected="yes"), CHOICE]
    reply = json.dumps(
        {
            "answers": [
                {"question_id": 1, "explanation": "x", "answer": "yes"},
                {"question_id": 2, "explanation": "x", "answer": "b"},
            ]
        }
    )
    judge = ListJudge([reply])
    unit, _ = gecko.validate_batch(judge, questions, IMAGE)
    block = extract_section(judge.requests[0].prompt, "questions") or ""
    assert block.splitlines() == [
        "1. Is there a circle? (yes or no)",
        "2. What colour is the circle?",
        "   a) red",
        "   b) blue",
        "   c) green",
    ]
    assert judge.requests[0].schema is MixedBatchReply
    verdicts = gecko.expand_batch(unit, 2)
    assert [verdicts[0].answer, verdicts[1].answer] == ["yes", "b"]
    assert [r.result for r in question_results(questions, verdicts)] == [1, 0]


def test_a_yes_no_only_batch_keeps_its_prompt() -> None:
    questions = [Question(question="Is there a circle?", expected="yes")]
    judge = ListJudge(
        [json.dumps({"answers": [{"question_id": 1, "explanation": "", "answer": "no"}]})]
    )
    gecko.validate_batch(judge, questions, IMAGE)
    assert judge.requests[0].schema is BatchVerdictReply
    assert extract_section(judge.requests[0].prompt, "questions") == "1. Is there a circle?"


# ---- the simulated judge answers them from what it sees --------------------------------


def simulated_choice(question: str, choices: list[str], image: bytes, schema: bool = True) -> str:
    request = FakeRequest(
        "m",
        choice_validator_prompt(question, choices),
        media=[FakeMedia("image/png", data=image)],
        response_schema=ImageChoiceReply.model_json_schema() if schema else None,
    )
    return SimulatedJudge().reply(request)


def test_the_simulated_judge_picks_the_colour_it_sees() -> None:
    image = circle_png("blue")
    choices = ["a) red", "b) blue", "c) green"]
    reply = simulated_choice("What colour is the circle?", choices, image)
    assert "[simulated judge]" in reply
    assert parse_letter(reply, choices) == "b"
    assert (
        parse_letter(
            simulated_choice("What color is the background?", ["a) black", "b) white"], image),
            ["a", "b"],
        )
        == "b"
    )
    assert (
        parse_letter(
            simulated_choice("How many circles are there?", ["a) one", "b) two"], image), ["a", "b"]
        )
        == "a"
    )
    assert (
        parse_letter(
            simulated_choice("Which shape is shown?", ["a) a square", "b) a circle"], image),
            ["a", "b"],
        )
        == "b"
    )


@pytest.mark.parametrize("schema", [True, False])
def test_the_simulated_judge_says_when_it_cannot_tell(schema: bool) -> None:
    image = circle_png("blue")
    choices = ["a) a cat", "b) a dog"]
    reply = simulated_choice("Which animal is shown?", choices, image, schema)
    assert "cannot tell" in reply
    with pytest.raises(UnparseableReply):
        parse_letter(reply, choices)
    verdict, _ = gecko.validate_question(
        ListJudge([reply]),
        0,
        Question(question="Which animal?", expected="a", choices=choices),
        IMAGE,
    )
    assert (verdict.status, verdict.reason) == ("unscored", "parse_error")


def test_the_simulated_judge_answers_batched_choice_questions() -> None:
    image = circle_png("green")
    questions = [Question(question="Is there a circle?", expected="yes"), CHOICE]
    request = FakeRequest(
        "m",
        mixed_batch_validator_prompt(questions),
        media=[FakeMedia("image/png", data=image)],
        response_schema=MixedBatchReply.model_json_schema(),
    )
    judge = ListJudge([SimulatedJudge().reply(request)])
    unit, _ = gecko.validate_batch(judge, questions, IMAGE)
    verdicts = gecko.expand_batch(unit, 2)
    assert [verdicts[0].answer, verdicts[1].answer] == ["yes", "c"]
