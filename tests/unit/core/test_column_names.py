"""No column dropped in silence, at load time: a CSV header, a JSONL object or the names a flag is
given that name one column twice are refused, naming it and its positions; names are read without
the spaces around them everywhere, and case matters."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalq.core.candidates import cell_candidates
from evalq.core.column_map import check_column_map, parse_assignments
from evalq.core.column_names import repeated, repeats_said
from evalq.core.dataset import load_dataset
from evalq.core.errors import DatasetError
from evalq.core.groups import group_by_columns
from evalq.metrics.ranking.candidates import candidates_of
from tests.support.datasets import load_refusal, write_rows

FLUENCY = {"template": "fluency"}


def fluency_refusal(path: Path) -> str:
    return load_refusal(path, "pointwise", FLUENCY)


def test_repeats_are_said_with_their_positions_as_written() -> None:
    assert repeated(["id", "a", "b"]) == {}
    assert repeats_said(["id", "a", "b"]) is None
    assert repeats_said(["id", "response", "response"]) == (
        "column 'response' appears 2 times, at positions 2 and 3"
    )
    assert repeats_said(["a", " a", "b", "a ", "b"]) == (
        "column 'a' appears 3 times, at positions 1, 2 (' a') and 4 ('a '); "
        "column 'b' appears 2 times, at positions 3 and 5"
    )
    assert repeats_said(["Response", "response"]) is None  # case matters


def test_a_csv_header_naming_a_column_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("id,response,response\n1,a,b\n", encoding="utf-8")
    said = fluency_refusal(path)
    assert said.startswith(f"{path}: column 'response' appears 2 times, at positions 2 and 3; ")
    assert "nothing was submitted: rename one of them" in said
    assert "--map FIELD=NEW_NAME reads it" in said
    path.write_text("id, response,response\n1,a,b\n", encoding="utf-8")
    assert "at positions 2 (' response') and 3" in fluency_refusal(path)


def test_csv_names_are_read_without_spaces_and_case_matters(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("id, response ,Response\n1,a,b\n", encoding="utf-8")
    row = load_dataset(path, "pointwise", FLUENCY).rows[0]
    assert (row.data, row.extra) == ({"response": "a"}, {"Response": "b"})


def test_unnamed_csv_columns_are_refused_only_when_a_row_holds_a_value_in_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "d.csv"
    path.write_text("id,response,,\n1,a,,\n2,b,,\n", encoding="utf-8")  # trailing commas
    assert len(load_dataset(path, "pointwise", FLUENCY).rows) == 2
    path.write_text("id,response,\n1,a,kept\n", encoding="utf-8")  # one unnamed column: kept
    assert load_dataset(path, "pointwise", FLUENCY).rows[0].extra == {"": "kept"}
    path.write_text("id,response,,\n1,a,,\n2,b,,lost?\n", encoding="utf-8")
    assert fluency_refusal(path) == (
        f"{path}: line 3: position 4 holds a value, but the header leaves its column unnamed, "
        "as it does positions 3 and 4; a row keeps only one unnamed column, so nothing was "
        "submitted: name them in the header"
    )


def test_a_jsonl_object_naming_a_key_twice_is_refused_naming_its_line(tmp_path: Path) -> None:
    good = '{"id": "1", "response": "a"}'
    path = write_rows(tmp_path / "d.jsonl", [good, '{"id": "2", "response": "a", "response": "b"}'])
    said = fluency_refusal(path)
    assert said.startswith(f"{path}: line 2: key 'response' appears 2 times, at positions 2 and 3")
    assert "JSON keeps only the last, so nothing was submitted: rename one of them" in said
    spaced = write_rows(tmp_path / "s.jsonl", ['{"id": "1", "response": "a", " response": "b"}'])
    assert "line 1: key 'response' appears 2 times, at positions 2 and 3 (' response')" in (
        fluency_refusal(spaced)
    )
    nested = '{"id": "1", "response": "a", "meta": {"x": [{"k": 1, "k": 2}]}}'
    said = fluency_refusal(write_rows(tmp_path / "n.jsonl", [nested]))
    assert "line 1: in meta.x[0], key 'k' appears 2 times, at positions 1 and 2" in said


def test_jsonl_keys_are_read_without_spaces_as_a_csv_header_is(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "d.jsonl", [{" id ": "r1", "response ": "a", "Tier": "t"}])
    row = load_dataset(path, "pointwise", FLUENCY).rows[0]
    assert (row.id, row.data, row.extra) == ("r1", {"response": "a"}, {"Tier": "t"})


def test_a_name_given_twice_to_a_flag_is_refused_in_one_line() -> None:
    with pytest.raises(DatasetError) as caught:
        cell_candidates("pointwise", {"candidates": ["a", "b", "a"]})
    assert str(caught.value) == "--candidates names column 'a' 2 times; name each column once"
    with pytest.raises(DatasetError, match="names candidate 'a' 2 times"):
        candidates_of({"candidates": "a,b, a"})
    assert group_by_columns([" tier", "category"]) == ["tier", "category"]
    with pytest.raises(DatasetError) as caught:
        group_by_columns(["tier", "tier "])
    assert str(caught.value) == "--group-by names column 'tier' 2 times; name each column once"
    with pytest.raises(DatasetError) as caught:
        parse_assignments(["response=a", "response=b"])
    assert str(caught.value) == (
        "--map: field 'response' is mapped twice (response=a, response=b); map each field once"
    )
    with pytest.raises(DatasetError, match="field 'response' is mapped twice"):
        check_column_map({"response": "a", " response": "b"})  # one field, once stripped
    with pytest.raises(DatasetError, match="column 'a' is mapped to both"):
        check_column_map({"prompt": "a", "response": "a"})
