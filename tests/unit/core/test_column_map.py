"""Column mapping (--map FIELD=COLUMN, column_map=) and Vertex's column names, at load time."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from evalq.core.column_map import parse_assignments
from evalq.core.dataset import load_dataset
from evalq.core.errors import DatasetError
from tests.support.datasets import png, write_rows


def promptfoo_csv(path: Path) -> Path:
    """A promptfoo-style CSV: its own names for the query and the response."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["customer_message", "reply", "context", "tier"])
        writer.writerow(["Where is my order?", "It ships today.", "Orders ship in 1 day.", "gold"])
        writer.writerow(["Can I return it?", "Yes, in 30 days.", "Returns: 30 days.", "free"])
    return path


def test_a_promptfoo_csv_runs_with_its_columns_mapped(tmp_path: Path) -> None:
    path = promptfoo_csv(tmp_path / "pf.csv")
    with pytest.raises(DatasetError, match="'query'"):  # unmapped, as on main
        load_dataset(path, "groundedness")
    loaded = load_dataset(
        path, "groundedness", column_map={"query": "customer_message", "response": "reply"}
    )
    assert not loaded.errors
    first = loaded.rows[0]
    assert first.data == {
        "query": "Where is my order?",
        "context": "Orders ship in 1 day.",
        "response": "It ships today.",
    }
    assert first.extra == {"tier": "gold"}  # an unmapped column stays the user's


def test_a_map_naming_a_column_no_row_has_names_it(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "d.jsonl", [{"query": "q", "context": "c", "reply": "r"}])
    with pytest.raises(DatasetError) as caught:
        load_dataset(path, "groundedness", column_map={"response": "answer"})
    assert "'answer'" in str(caught.value) and "reply" in str(caught.value)


def test_a_mapped_field_that_is_also_a_column_is_refused_as_ambiguous(tmp_path: Path) -> None:
    rows = [{"query": "q", "customer_message": "m", "context": "c"}]
    path = write_rows(tmp_path / "d.jsonl", rows)
    with pytest.raises(DatasetError) as caught:
        load_dataset(path, "groundedness", column_map={"query": "customer_message"})
    assert "line 1" in str(caught.value) and "'customer_message'" in str(caught.value)


def test_map_flags_are_checked() -> None:
    assert parse_assignments(["query=customer_message", "response=reply"]) == {
        "query": "customer_message",
        "response": "reply",
    }
    with pytest.raises(DatasetError, match="FIELD=COLUMN"):
        parse_assignments(["query"])
    with pytest.raises(DatasetError, match="both"):
        parse_assignments(["query=text", "response=text"])


def test_groundedness_takes_vertex_prompt_response_context(tmp_path: Path) -> None:
    rows = [{"prompt": "What ships?", "response": "Boxes ship.", "context": "Boxes ship daily."}]
    loaded = load_dataset(write_rows(tmp_path / "v.jsonl", rows), "groundedness")
    assert not loaded.errors
    assert loaded.rows[0].data["query"] == "What ships?"
    assert loaded.rows[0].extra == {}
    # Both given: the query is read, Vertex's prompt kept as the user's column.
    both = [{"query": "q", "prompt": "p", "context": "c"}]
    loaded = load_dataset(write_rows(tmp_path / "b.jsonl", both), "groundedness")
    assert loaded.rows[0].data["query"] == "q" and loaded.rows[0].extra == {"prompt": "p"}


def test_groundedness_without_query_or_prompt_names_both(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "n.jsonl", [{"context": "c", "response": "r"}])
    with pytest.raises(DatasetError) as caught:
        load_dataset(path, "groundedness")
    assert "'query'" in str(caught.value) and "'prompt'" in str(caught.value)


def test_forty_gecko_rows_with_a_category_warn_once(tmp_path: Path) -> None:
    png(tmp_path / "a.png")
    rows = [
        {"id": f"r{i}", "prompt": "a red square", "image": "a.png", "category": f"c{i % 8}"}
        for i in range(40)
    ]
    loaded = load_dataset(write_rows(tmp_path / "g.jsonl", rows), "gecko-image")
    assert [w for w in loaded.warnings if "category" in w] == [
        "unknown column(s) 'category' in 40 of 40 rows: kept as extra, not read by the metric"
    ]
    assert loaded.rows[0].extra == {"category": "c0"}
