"""Judge-reply parsers: awkward real-world forms parse; anything else is UnparseableReply."""

from __future__ import annotations

import json

import pytest

from evalq.core.errors import UnparseableReply
from evalq.core.replies import extract_json
from evalq.metrics.gecko.parsing import parse_rubric, parse_yes_no


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Yes.", "yes"),
        ("no", "no"),
        ("NO!", "no"),
        ("**Verdict:** no", "no"),
        ("Verdict: yes", "yes"),
        ('{"explanation": "a red circle is visible", "answer": "yes"}', "yes"),
        ('```json\n{"answer": "No", "explanation": "there is no dog"}\n```', "no"),
        ('Sure! Here is my judgement:\n```\n{"verdict": "yes"}\n```\nHope it helps.', "yes"),
        ("Looking at the picture, the circle is blue, not red. Final answer: no", "no"),
        ("The answer is yes: the cat sits on the mat.", "yes"),
        ("<question>\nQuestion: is there a cat?\nVerdict: yes\n</question>", "yes"),
        ("I can clearly see a skateboard, so yes", "yes"),
        ('{"answer": true}', "yes"),
        # one verdict next to words that look like a hedge
        ("Answer: Yes, no doubt.", "yes"),
        ("Verdict: no (a yes would need a dog)", "no"),
        ("Initial answer: yes. On a closer look the cat is a fox. Final answer: no", "no"),
        ("No, there is no dog. Verdict: no", "no"),
    ],
)
def test_yes_no_awkward_forms(reply: str, expected: str) -> None:
    assert parse_yes_no(reply) == expected


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "   ",
        "I cannot tell from this image.",
        "yes or no? hard to say",
        '{"answer": "maybe"}',
        "Verdict: unclear",
    ],
)
def test_yes_no_unparseable(reply: str) -> None:
    with pytest.raises(UnparseableReply) as info:
        parse_yes_no(reply)
    assert info.value.reason == "parse_error"


@pytest.mark.parametrize(
    "reply",
    [
        "Verdict: yes|no",  # the output template echoed back
        "Answer: yes or no, hard to say",
        "Answer: yes/no",
        "**Verdict:** yes or no",
        '{"explanation": "unclear", "answer": "yes|no"}',
        '{"answer": "yes or no"}',
        "Verdict: yes|no\n\nThe cat is there.\nVerdict: yes",  # an echo, then an answer
        "Verdict: yes\nVerdict: no",  # two verdicts that disagree
        "Yes/No",
        "Answer: yes, no.",
    ],
)
def test_yes_no_hedges_are_no_verdict(reply: str) -> None:
    with pytest.raises(UnparseableReply, match="hedges") as info:
        parse_yes_no(reply)
    assert info.value.reason == "parse_error"
    assert info.value.raw == reply


def test_unparseable_keeps_raw_reply() -> None:
    with pytest.raises(UnparseableReply) as info:
        parse_yes_no("perhaps, perhaps not")
    assert info.value.raw == "perhaps, perhaps not"


def test_extract_json_prefers_whole_then_fenced() -> None:
    assert extract_json('{"a": 1}') == {"a": 1}
    assert extract_json('prose ```json\n{"a": 2}\n``` more') == {"a": 2}
    assert extract_json("x [1, 2] y") == [1, 2]
    with pytest.raises(UnparseableReply):
        extract_json("no json here")


def _rubric_json(**overrides: object) -> str:
    data: dict[str, object] = {
        "keywords": ["red", "circle"],
        "questions": [
            {
                "question": "Is there a circle?",
                "answer": "yes",
                "tag": "object",
                "keywords": ["circle"],
                "justification": "j",
            },
            {
                "question": "Is the circle red?",
                "answer": "Yes",
                "tag": "Color",
                "keywords": ["red"],
                "justification": "j",
            },
        ],
    }
    data.update(overrides)
    return json.dumps(data)


def test_rubric_parses_and_normalises() -> None:
    rubric = parse_rubric(_rubric_json())
    assert [q.answer for q in rubric.questions] == ["yes", "yes"]
    assert rubric.questions[1].tag == "color"


def test_rubric_seed_form_with_qas_and_bracketed_keywords() -> None:
    seed_like = {
        "keywords": "A {1}[red] {2}[circle]",
        "qas": [
            {
                "question_id": 1,
                "question": "is the circle red?",
                "answer": "yes",
                "choices": ["yes", "no"],
                "justification": "j",
                "question_type": "color",
            }
        ],
    }
    rubric = parse_rubric("```json\n" + json.dumps(seed_like) + "\n```")
    assert rubric.keywords == ["red", "circle"]
    assert rubric.questions[0].tag == "color"


def test_rubric_unknown_tag_becomes_other() -> None:
    reply = _rubric_json(
        questions=[
            {
                "question": "q?",
                "answer": "yes",
                "tag": "texture",
                "keywords": [],
                "justification": "",
            }
        ]
    )
    assert parse_rubric(reply).questions[0].tag == "other"


@pytest.mark.parametrize(
    "reply",
    [
        "not json",
        _rubric_json(questions=[]),
        _rubric_json(
            questions=[
                {
                    "question": "q?",
                    "answer": "maybe",
                    "tag": "object",
                    "keywords": [],
                    "justification": "",
                }
            ]
        ),
        json.dumps({"keywords": ["a"]}),
        json.dumps([1, 2, 3]),
    ],
)
def test_rubric_unparseable(reply: str) -> None:
    with pytest.raises(UnparseableReply):
        parse_rubric(reply)
