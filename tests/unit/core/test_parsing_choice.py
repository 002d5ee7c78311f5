"""Multiple-choice letters and batched replies, in the forms judges actually write them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalq.core.errors import UnparseableReply
from evalq.core.parsing_choice import (
    choice_text,
    label_choices,
    letters_for,
    parse_letter,
    split_batched_reply,
)

CHOICES = ["a) blue", "b) red", "c) green", "d) pink"]


@pytest.mark.parametrize(
    ("reply", "letter"),
    [
        ("b", "b"),
        ("B", "b"),
        ("(b)", "b"),
        ("[c]", "c"),
        ("b.", "b"),
        ("B) red", "b"),
        ("c: green", "c"),
        ("Answer: c", "c"),
        ("answer is: d", "d"),
        ("**Answer:** (c) green", "c"),
        ("The correct answer is option B.", "b"),
        ("Final answer: (a)", "a"),
        ("Verdict: a", "a"),
        ("Looking at the last frames, the circle ends on the right.\nAnswer: a", "a"),
        ("The answer is (b) [red]", "b"),
        ('{"explanation": "it is red", "answer": "b"}', "b"),
        ('```json\n{"answer": "c"}\n```', "c"),
        ('{"answer": "(d)"}', "d"),
        ('{"answer": "B) red"}', "b"),
        ('{"verdict": "a"}', "a"),
        ("red", "b"),  # the text of exactly one choice
        ('{"answer": "green"}', "c"),
    ],
)
def test_letter_forms_judges_write(reply: str, letter: str) -> None:
    assert parse_letter(reply, CHOICES) == letter


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "   ",
        "a red circle",  # "a" the article, not a choice
        "Answer: a red circle",
        "I think a or b",
        "e",  # not one of the four choices
        "Answer: e",
        '{"answer": "e"}',
        '{"answer": "c',  # cut off mid-JSON: its text is no verdict
        '{"explanation": "b looks right"}',
        "none of them",
        "purple",
    ],
)
def test_anything_else_is_unparseable_and_keeps_the_raw_reply(reply: str) -> None:
    with pytest.raises(UnparseableReply) as info:
        parse_letter(reply, CHOICES)
    assert info.value.raw == reply or (not reply.strip() and info.value.raw == reply)


FIVE = ["a) blue", "b) red", "c) green", "d) pink", "e) none of these"]


@pytest.mark.parametrize(
    "reply",
    [
        "Verdict: a|b|c|d|e",  # the seed's output template echoed back
        "Answer: a/b",
        "Answer: a or b",
        "Answer: (b) or (c)",
        "Answer: a, b",
        "(a) or (b)",
        "b/c",
        '{"explanation": "either", "answer": "a/b"}',
        '{"answer": "a|b|c|d|e"}',
        "Verdict: a|b|c|d|e\nThe ball ends on the right.\nVerdict: c",  # an echo, then c
        "Answer: b\nAnswer: c",  # two answers that disagree
    ],
)
def test_a_reply_naming_several_letters_hedges(reply: str) -> None:
    with pytest.raises(UnparseableReply, match="hedges") as info:
        parse_letter(reply, FIVE)
    assert info.value.raw == reply


@pytest.mark.parametrize(
    ("reply", "letter"),
    [
        ("Answer: c, not b", "c"),
        ("Option (a) is wrong: the ball is red. Answer: b", "b"),
        ("Answer: b. Ignore option (a).", "b"),
        ("At first glance the answer is (a), but the end frame settles it. Final answer: c", "c"),
    ],
)
def test_one_letter_next_to_others_in_prose_is_a_verdict(reply: str, letter: str) -> None:
    assert parse_letter(reply, FIVE) == letter


def test_letters_follow_the_number_of_choices() -> None:
    assert letters_for(["a) x", "b) y"]) == "ab"
    assert letters_for(None) == "abcd"
    assert parse_letter("b", ["a) yes", "b) no"]) == "b"
    with pytest.raises(UnparseableReply):
        parse_letter("c", ["a) yes", "b) no"])


def test_choice_labels() -> None:
    assert label_choices(["red", "(b) blue", "C) green", "d. pink"]) == [
        "a) red",
        "b) blue",
        "c) green",
        "d) pink",
    ]
    assert choice_text("b) the red one") == "the red one"


def test_batched_json_by_question_id() -> None:
    reply = (
        '{"answers": [{"question_id": 2, "answer": "c"}, {"question_id": 1, "answer": "b"},'
        ' {"question_id": 9, "answer": "a"}]}'
    )
    assert split_batched_reply(reply, 3) == {1: "b", 2: "c"}  # 9 is no question; 3 is missing


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('["a", "b", "c"]', {1: "a", 2: "b", 3: "c"}),
        ('{"1": "yes", "2": "no"}', {1: "yes", 2: "no"}),
        ('{"answers": [{"id": "Q1", "verdict": true}]}', {1: "yes"}),
        ("1. b\n2: (c) red\nQ3 - Answer: a", {1: "b", 2: "(c) red", 3: "Answer: a"}),
        ("Question 2: yes\nQuestion 1: no", {1: "no", 2: "yes"}),
        (
            "<question>\nQuestion: x?\nVerdict: a\n</question>\n"
            "<question>\nQuestion: y?\nVerdict: d\n</question>",
            {1: "Question: x?\nVerdict: a", 2: "Question: y?\nVerdict: d"},
        ),
    ],
)
def test_batched_forms(reply: str, expected: dict[int, str]) -> None:
    assert split_batched_reply(reply, 3) == expected


@pytest.mark.parametrize(
    "reply", ["", "no idea", '{"answers": []}', '{"answers": [{"question_id": 1, "ans', "yes"]
)
def test_batched_reply_with_no_answers_is_unparseable(reply: str) -> None:
    with pytest.raises(UnparseableReply):
        split_batched_reply(reply, 2)


def test_batched_answers_are_read_like_single_ones_hedges_included() -> None:
    pieces = split_batched_reply("1. Answer: a/b\n2. Answer: c", 2)
    with pytest.raises(UnparseableReply, match="hedges"):
        parse_letter(pieces[1], CHOICES)
    assert parse_letter(pieces[2], CHOICES) == "c"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.lists(st.text(max_size=20), min_size=2, max_size=4))
def test_parse_letter_never_crashes(text: str, choices: list[str]) -> None:
    try:
        letter = parse_letter(text, choices)
    except UnparseableReply:
        return
    assert letter in letters_for(choices)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.integers(min_value=1, max_value=6))
def test_split_batched_never_crashes(text: str, count: int) -> None:
    try:
        found = split_batched_reply(text, count)
    except UnparseableReply:
        return
    assert found
    assert all(1 <= number <= count for number in found)
