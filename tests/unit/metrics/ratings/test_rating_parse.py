"""Ratings and pairwise choices are read from structure only; anything else is unparseable."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalq.core.errors import UnparseableReply
from evalq.metrics.ratings.parsing import PairwiseReply, RatingReply, parse_choice, parse_rating


@pytest.mark.parametrize(
    ("reply", "rating", "explanation"),
    [
        ('{"explanation": "clear and faithful", "rating": 4}', 4, "clear and faithful"),
        ('```json\n{"explanation": "ok", "rating": 5}\n```', 5, "ok"),
        ('Here is my verdict: {"explanation": "weak", "rating": 2}', 2, "weak"),
        ('{"explanation": "x", "rating": "3"}', 3, "x"),
        ('{"explanation": "x", "rating": 1.0}', 1, "x"),
        ('{"rating": 4, "explanation": "order does not matter"}', 4, "order does not matter"),
        ("4", 4, ""),  # a bare enum value, as text/x.enum replies arrive
        (' "5"\n', 5, ""),
    ],
)
def test_ratings_parse_from_structure(reply: str, rating: int, explanation: str) -> None:
    parsed = parse_rating(reply)
    assert (parsed.verdict, parsed.explanation) == (rating, explanation)


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ('{"explanation": "great", "rating": 7}', "outside the scale"),
        ('{"explanation": "awful", "rating": 0}', "outside the scale"),
        ("6", "outside the scale"),
        ('{"explanation": "x", "rating": 3.5}', "not a whole number"),
        ('{"explanation": "x", "rating": "four"}', "not a number"),
        ('{"explanation": "x", "rating": true}', "boolean"),
        ('{"explanation": "x", "rating": Infinity}', "not a number"),
        ("NaN", "not a number"),
        ('{"explanation": "no verdict here"}', "no rating field"),
        ("Rating: 4", "neither"),  # prose is never scraped
        ("I would give it a 4 out of 5.", "neither"),
        ('{"explanation": "cut off', "neither"),
        ("", "empty"),
        ("[4]", "not an object"),
    ],
)
def test_bad_ratings_are_unparseable(reply: str, why: str) -> None:
    with pytest.raises(UnparseableReply) as caught:
        parse_rating(reply)
    assert why in caught.value.message
    if reply:
        assert caught.value.raw == reply  # kept for the row's detail


@pytest.mark.parametrize(
    ("reply", "choice"),
    [
        ('{"explanation": "A cites the passage", "pairwise_choice": "A"}', "A"),
        ('```json\n{"explanation": "tie", "pairwise_choice": "SAME"}\n```', "SAME"),
        ('{"explanation": "x", "pairwise_choice": "b"}', "B"),
        ("B", "B"),
        ("SAME", "SAME"),
        ('"A"', "A"),
    ],
)
def test_choices_parse_from_structure(reply: str, choice: str) -> None:
    assert parse_choice(reply).verdict == choice


@pytest.mark.parametrize(
    "reply",
    [
        '{"explanation": "x", "pairwise_choice": "C"}',
        '{"explanation": "x", "pairwise_choice": "Response A"}',
        '{"explanation": "no choice"}',
        "Response A is better.",
        "I prefer B",
        "4",
        "",
    ],
)
def test_bad_choices_are_unparseable(reply: str) -> None:
    with pytest.raises(UnparseableReply):
        parse_choice(reply)


RATING_HEDGES = [
    "Rating: 3 or 4",
    "3-4",
    "3 or 4",
    '{"explanation": "between the two", "rating": "3 or 4"}',
    '{"explanation": "x", "rating": "3-4"}',
    '{"explanation": "x", "rating": [3, 4]}',
]
CHOICE_HEDGES = [
    "A or B",
    "A/B",
    "A|SAME|B",  # the output template echoed back
    "Choice: A or B",
    '{"explanation": "both fine", "pairwise_choice": "A or B"}',
    '{"explanation": "x", "pairwise_choice": "A/B"}',
    '{"explanation": "x", "pairwise_choice": ["A", "B"]}',
]


@pytest.mark.parametrize(
    ("parse", "reply"),
    [(parse_rating, reply) for reply in RATING_HEDGES]
    + [(parse_choice, reply) for reply in CHOICE_HEDGES],
)
def test_a_reply_naming_several_ratings_or_choices_hedges(
    parse: Callable[[str], object], reply: str
) -> None:
    with pytest.raises(UnparseableReply, match="hedges") as caught:
        parse(reply)
    assert caught.value.raw == reply


def test_four_out_of_five_is_not_read_as_a_hedge() -> None:
    with pytest.raises(UnparseableReply, match="neither"):
        parse_rating("Rating: 4/5")


def test_schemas_put_the_explanation_before_the_verdict() -> None:
    assert list(RatingReply.model_json_schema()["properties"]) == ["explanation", "rating"]
    assert list(PairwiseReply.model_json_schema()["properties"]) == [
        "explanation",
        "pairwise_choice",
    ]
    rating = RatingReply.model_json_schema()["properties"]["rating"]
    assert (rating["minimum"], rating["maximum"]) == (1, 5)


@given(st.text(max_size=200))
def test_any_text_parses_to_a_valid_rating_or_raises(text: str) -> None:
    try:
        parsed = parse_rating(text)
    except UnparseableReply:
        return
    assert 1 <= parsed.verdict <= 5


@given(st.integers(min_value=-100, max_value=100), st.text(max_size=40))
def test_json_ratings_in_range_parse_and_others_do_not(rating: int, explanation: str) -> None:
    reply = json.dumps({"explanation": explanation, "rating": rating})
    if 1 <= rating <= 5:
        assert parse_rating(reply).verdict == rating
    else:
        with pytest.raises(UnparseableReply):
            parse_rating(reply)
