"""Gecko keyword coverage: one question per keyword, re-asks only for the missing keywords,
and each question's keywords recorded so a keyword asked twice shows in the results."""

from __future__ import annotations

import json
import re
from typing import Any

from evalq.core.judge import MediaPart
from evalq.core.models import MediaRef, RowInput
from evalq.metrics.gecko import metric as gecko
from evalq.metrics.gecko_video.metric import GECKO_VIDEO, VIDEO_RUBRIC
from tests.support.contexts import row_context, run_row
from tests.support.gecko_rubrics import choice_question, rubric_reply, yes_no_question
from tests.support.judges import ListJudge
from tests.support.prompts import extract_section

IMAGE = MediaPart(mime_type="image/png", data=b"\x89PNG\r\n\x1a\n")
_BLOCK_RE = re.compile(
    r"<untrusted-(?P<n>[0-9a-f]{16}) kind=[a-z_]+>\n.*?\n</untrusted-(?P=n)>", re.DOTALL
)


def outside_blocks(prompt: str) -> str:
    return _BLOCK_RE.sub("", prompt)


KEYWORDS = ["cat", "ball", "sofa", "striped"]
CAT_AND_BALL = [
    yes_no_question("Is there a cat?", ["cat"]),
    yes_no_question("Is there a ball?", ["ball"]),
]  # a first rubric's questions: sofa and striped are left out


def test_the_re_ask_names_only_missing_keywords_and_shows_the_questions_already_asked() -> None:
    first = rubric_reply(KEYWORDS, CAT_AND_BALL)
    second = rubric_reply(
        KEYWORDS,
        [
            yes_no_question("Is there a sofa?", ["sofa"]),
            yes_no_question("Is the sofa striped?", ["striped"]),
        ],
    )
    judge = ListJudge([first, second])
    gecko.generate_rubric(judge, "a cat and a ball on a striped sofa")
    gap = judge.requests[1].prompt
    assert extract_section(gap, "missing_keywords") == "sofa\nstriped"
    asked = extract_section(gap, "asked_questions") or ""
    assert "Is there a cat?" in asked
    assert "Is there a ball?" in asked
    assert extract_section(gap, "image_description") == "a cat and a ball on a striped sofa"
    # Everything the judge wrote (keywords, questions) travels inside untrusted blocks only.
    rest = outside_blocks(gap)
    for word in ("sofa", "striped", "Is there a cat", "Is there a ball"):
        assert word not in rest
    assert "full JSON" not in gap


def test_the_merge_adds_one_question_per_missing_keyword_and_nothing_else() -> None:
    """A re-ask that repeats everything must not end with cat x2, ball x2 for four keywords:
    the merge adds only the questions for the missing ones."""
    first = rubric_reply(KEYWORDS, CAT_AND_BALL)
    second = rubric_reply(
        KEYWORDS,
        [
            # rephrased: only an already-covered keyword
            yes_no_question("Can you see a cat?", ["cat"]),
            yes_no_question("Is a ball visible?", ["ball"]),
            yes_no_question("Is there a sofa?", ["sofa"]),
            # a second one for a missing keyword
            yes_no_question("Does the image show a sofa?", ["sofa"]),
            # covers a missing one
            yes_no_question("Is the cat on the striped sofa?", ["cat", "striped"]),
            yes_no_question("Is the sofa striped?", ["striped"]),  # striped is covered by now
        ],
    )
    rubric, _ = gecko.generate_rubric(
        ListJudge([first, second]), "a cat and a ball on a striped sofa"
    )
    assert [q.question for q in rubric.questions] == [
        "Is there a cat?",
        "Is there a ball?",
        "Is there a sofa?",
        "Is the cat on the striped sofa?",
    ]
    assert rubric.coverage.missing == []
    assert rubric.coverage.asked_again


def test_each_question_records_the_keywords_it_checks() -> None:
    first = rubric_reply(
        ["red", "circle"],
        [
            yes_no_question("Is there a circle?", []),  # names its keyword only in text
            # a judge's own spelling of a listed keyword
            yes_no_question("Is the circle red?", ["RED"]),
        ],
    )
    rubric, _ = gecko.generate_rubric(ListJudge([first]), "a red circle")
    assert [q.keywords for q in rubric.questions] == [["circle"], ["red"]]


def plan_and_score(metric: Any, row: RowInput, judge: ListJudge) -> Any:
    ctx = row_context(metric.name, row, {judge.model: judge}, lambda field: IMAGE)
    return run_row(metric, ctx)[2]


def test_a_keyword_with_two_questions_shows_in_the_row() -> None:
    rubric = rubric_reply(
        ["cat", "ball"],
        [
            yes_no_question("Is there a cat?", ["cat"]),
            yes_no_question("Is the cat black?", ["cat"]),
            yes_no_question("Is there a ball?", ["ball"]),
        ],
    )
    verdict = json.dumps({"explanation": "x", "answer": "yes"})
    judge = ListJudge([rubric, verdict, verdict, verdict])
    row = RowInput(
        id="r",
        line=1,
        prompt="a cat and a ball",
        media={"image": MediaRef(kind="path", value="/x.png")},
    )
    result = plan_and_score(gecko.GECKO_IMAGE, row, judge)
    assert [q.keywords for q in result.questions] == [["cat"], ["cat"], ["ball"]]
    assert result.details["keywords_with_several_questions"] == {"cat": 2}


CHOICES = ["a) one", "b) two", "c) three", "d) four"]


def test_gecko_video_re_asks_the_same_way() -> None:
    keywords = [{"keyword": k, "type": "object"} for k in KEYWORDS]
    first = rubric_reply(keywords, [choice_question("Which animal?", "a", CHOICES, ["cat"])])
    second = rubric_reply(
        keywords,
        [
            choice_question("Which animal is shown?", "b", CHOICES, ["cat"]),
            choice_question("Which toy?", "a", CHOICES, ["ball"]),
            choice_question("Which toy is it?", "c", CHOICES, ["ball"]),
            choice_question("Which seat?", "d", CHOICES, ["sofa", "striped"]),
        ],
    )
    judge = ListJudge([first, second])
    rubric, _ = gecko.generate_rubric(judge, "a cat and a ball on a striped sofa", VIDEO_RUBRIC)
    gap = judge.requests[1].prompt
    assert extract_section(gap, "missing_keywords") == "ball\nsofa\nstriped"
    assert "Which animal?" in (extract_section(gap, "asked_questions") or "")
    assert "ball" not in outside_blocks(gap)
    assert [q.question for q in rubric.questions] == ["Which animal?", "Which toy?", "Which seat?"]
    assert [q.keywords for q in rubric.questions] == [["cat"], ["ball"], ["sofa", "striped"]]
    assert rubric.coverage.missing == []
    assert GECKO_VIDEO.rubric_spec is VIDEO_RUBRIC


def test_the_simulated_video_judge_fills_only_the_gap() -> None:
    from evalq.fake_gemini.brain import SimulatedJudge
    from evalq.fake_gemini.protocol import FakeRequest
    from evalq.metrics.gecko.prompts import RubricGap
    from evalq.metrics.gecko_video.parsing import VideoRubricReply, parse_video_rubric
    from evalq.metrics.gecko_video.prompts import video_rubric_prompt

    judge = SimulatedJudge()
    schema = VideoRubricReply.model_json_schema()
    prompt = "a red circle moving from left to right"
    keywords, questions = parse_video_rubric(
        judge.reply(FakeRequest("m", video_rubric_prompt(prompt), response_schema=schema))
    )
    missing = keywords[-1:]
    gap = RubricGap(asked=questions[:1], missing=[*missing, "a unicorn"])
    more_keywords, more = parse_video_rubric(
        judge.reply(FakeRequest("m", video_rubric_prompt(prompt, gap), response_schema=schema))
    )
    assert more_keywords == missing
    assert len(more) == 1
    assert missing[0] in more[0].keywords
