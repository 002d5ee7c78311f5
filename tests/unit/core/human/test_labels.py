"""Reading human labels from a dataset (evalq/core/human/labels.py, row_questions' `human`):
good labels in the form the judge's are compared in, bad ones a BadLabel naming the row,
and never a refused row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalq.client.api import split_keywords
from evalq.core.dataset import load_dataset
from evalq.core.errors import DatasetError
from evalq.core.human.labels import (
    BadLabel,
    preference,
    rating_label,
    row_number,
    sentence_entries,
    sentence_label,
)
from evalq.core.options import validate_options
from evalq.core.row_questions import parse_questions


@pytest.mark.parametrize(
    ("value", "number"),
    [(4, 4.0), ("3.5", 3.5), (" 2 ", 2.0), ("yes", 1.0), ("No", 0.0), (True, 1.0), (0, 0.0)],
)
def test_a_row_label_is_a_number_or_yes_no(value: object, number: float) -> None:
    assert row_number(value, "row r1") == number


@pytest.mark.parametrize(
    ("value", "reason", "words"),
    [
        ("maybe", "not_a_number", "row r7: human 'maybe' is not a number or yes/no"),
        (None, "missing", "row r7: no human label"),
        ("  ", "missing", "row r7: no human label"),
        ("nan", "not_a_number", "is not a finite number"),
    ],
)
def test_a_bad_row_label_names_the_row_and_why(value: object, reason: str, words: str) -> None:
    with pytest.raises(BadLabel) as caught:
        row_number(value, "row r7")
    assert caught.value.reason == reason
    assert words in caught.value.message


def test_a_pointwise_rating_must_be_a_whole_number_on_its_scale() -> None:
    assert rating_label("4", "row a", 1, 5) == 4
    for bad in (0, 6, 3.5, "9"):
        with pytest.raises(BadLabel) as caught:
            rating_label(bad, "row a", 1, 5)
        assert caught.value.reason == "out_of_range"
        assert "is not a whole rating 1-5" in caught.value.message


@pytest.mark.parametrize(
    ("value", "side"),
    [
        ("A", "A"),
        ("b", "B"),
        ("Tie", "tie"),
        ("same", "tie"),
        ("response_a", "A"),
        ("response_b", "B"),
        ("response", "A"),
        ("baseline_model_response", "B"),
    ],
)
def test_a_preference_is_a_side_or_the_preferred_column(value: str, side: str) -> None:
    assert preference(value, "row p") == side


def test_an_unknown_preference_is_a_bad_label() -> None:
    with pytest.raises(BadLabel, match="row p: human 'C' is not A, B, tie") as caught:
        preference("C", "row p")
    assert caught.value.reason == "unknown_label"


def test_questions_read_the_raters_answer_and_a_bad_one_keeps_the_row() -> None:
    value = [
        {"question": "Is there a cat?", "answer": "yes", "human": "No"},
        {"question": "Is it red?", "answer": "no", "human": "maybe"},
        {"question": "Which animal?", "answer": "cat", "choices": ["dog", "cat"], "human": "a"},
        {"question": "How many?", "answer": "b", "choices": ["one", "two"], "human": "two"},
        {"question": "Any sky?", "answer": "yes"},
        {"question": "Which colour?", "answer": "a", "choices": ["red", "blue"], "human": "green"},
    ]
    questions = parse_questions(value, "r1")
    assert questions is not None
    assert [q.human for q in questions] == ["no", None, "a", "b", None, None]
    assert questions[1].human_error == "questions[1]: human 'maybe' is not yes or no"
    assert questions[4].human_error is None  # not labelled: no error, just no label
    assert questions[5].human_error is not None
    assert "'green' is not one of its choices" in questions[5].human_error


def test_sentence_labels_come_as_a_list_or_as_sentence_label_objects() -> None:
    assert sentence_entries('["supported", "no_rad"]', "row g") == [
        (None, "supported"),
        (None, "no_rad"),
    ]
    objects = [{"sentence": "The sky is blue.", "label": "unsupported"}]
    assert sentence_entries(json.dumps(objects), "row g") == [("The sky is blue.", "unsupported")]
    assert sentence_label("No RAD", "row g sentence 1") == "no_rad"
    with pytest.raises(BadLabel, match="not JSON"):
        sentence_entries("[supported", "row g")
    with pytest.raises(BadLabel, match="row g sentence 2: human 'true' is not one of"):
        sentence_label("true", "row g sentence 2")


def test_human_is_an_option_of_every_metric() -> None:
    for metric in ("gecko-image", "groundedness", "pointwise", "pairwise", "rank"):
        assert validate_options(metric, {"human": "rating"}) == {"human": "rating"}
    with pytest.raises(DatasetError, match="option human"):
        validate_options("pointwise", {"human": 3})
    _, options = split_keywords("gecko-image", {"human": "rater"})  # evaluate(..., human=)
    assert options == {"human": "rater"}


def test_the_loader_refuses_a_human_column_no_row_has_and_does_not_call_it_unknown(
    tmp_path: Path,
) -> None:
    data = tmp_path / "d.jsonl"
    rows = [{"id": "a", "response": "x", "rating": 4, "note": "n"}, {"id": "b", "response": "y"}]
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    options = {"template": "fluency"}
    loaded = load_dataset(data, "pointwise", {**options, "human": "rating"})
    assert loaded.rows[0].extra["rating"] == 4
    assert not any("rating" in w for w in loaded.warnings)  # read as labels, not "unknown"
    assert any("note" in w for w in loaded.warnings)
    with pytest.raises(DatasetError, match=r"--human 'ratng': no row has this column.*rating"):
        load_dataset(data, "pointwise", {**options, "human": "ratng"})
