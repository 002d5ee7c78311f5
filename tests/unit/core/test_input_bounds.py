"""The bounds on one submit: a row over a row bound fails alone with its message, a dataset over a
dataset bound is refused before a row is kept, unknown columns are warned of once per dataset in a
bounded message, and a value that could not be stored and read back fails only its row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalq.core.bounds import MAX_QUESTIONS_PER_ROW, InputBounds
from evalq.core.dataset import LoadedDataset, load_dataset
from evalq.core.errors import DatasetError, InputError
from evalq.core.models import RowInput
from evalq.core.records import MAX_VALUE_DEPTH
from tests.support.datasets import write_csv, write_rows


def image_record(row_id: str, **more: Any) -> dict[str, Any]:
    return {"id": row_id, "prompt": "a red square", "image": "a.png", **more}


def questions(count: int) -> list[dict[str, str]]:
    return [{"question": f"Is detail {i} there?", "answer": "yes"} for i in range(count)]


def errors(loaded: LoadedDataset) -> dict[str, tuple[int, InputError]]:
    return {error.row_id: (line, error) for line, error in loaded.errors}


# ---- bounds on a row: it fails alone --------------------------------------------------------


def test_a_row_over_the_questions_bound_fails_alone_naming_bound_line_and_field(
    image_folder: Path,
) -> None:
    most = MAX_QUESTIONS_PER_ROW
    path = write_rows(
        image_folder / "d.jsonl",
        [
            image_record("at-bound", questions=questions(most)),
            image_record("over", questions=questions(most + 1)),
            image_record("none"),
        ],
    )
    loaded = load_dataset(path)
    assert [r.id for r in loaded.rows] == ["at-bound", "none"]
    assert len(loaded.rows[0].questions or []) == most
    ((line, error),) = loaded.errors
    assert (line, error.row_id, error.field) == (2, "over", "questions")
    assert error.message == (
        f"line 2: {most + 1} questions, over the limit of {most} questions per row "
        "(EVALQ_MAX_QUESTIONS_PER_ROW)"
    )


def test_the_questions_bound_is_an_argument_and_holds_for_video_and_for_each_cell(
    image_folder: Path,
) -> None:
    path = write_rows(image_folder / "d.jsonl", [image_record("r", questions=questions(4))])
    bounds = InputBounds(max_questions_per_row=3)
    assert load_dataset(path, bounds=InputBounds(max_questions_per_row=4)).rows
    ((_, error),) = load_dataset(path, bounds=bounds).errors
    assert error.field == "questions" and "over the limit of 3 questions" in error.message

    (image_folder / "a.mp4").write_bytes(b"\0\0\0\x18ftypmp42" + b"\0" * 16)
    choices = [{**q, "choices": ["yes", "no", "maybe"]} for q in questions(4)]
    video = write_rows(
        image_folder / "v.jsonl",
        [{"id": "v", "prompt": "p", "video": "a.mp4", "questions": choices}],
    )
    ((_, error),) = load_dataset(video, "gecko-video", bounds=bounds).errors
    assert (error.row_id, error.field) == ("v", "questions")

    cells = write_rows(
        image_folder / "c.jsonl",
        [{"id": "c", "prompt": "p", "sdxl": "a.png", "flux": "a.png", "questions": questions(4)}],
    )
    loaded = load_dataset(cells, "gecko-image", {"candidates": ["sdxl", "flux"]}, bounds=bounds)
    assert not loaded.rows
    assert sorted(getattr(e, "candidate", "") for _, e in loaded.errors) == ["flux", "sdxl"]
    assert {e.field for _, e in loaded.errors} == {"questions"}


def test_a_row_over_the_bytes_bound_fails_alone_though_each_field_is_under_its_own(
    image_folder: Path,
) -> None:
    # Names and values count (all ASCII here, so characters are bytes): 1,252 bytes in the wide
    # row, each of its fields at most 305.
    small = image_record("r1")
    size = sum(len(k) + len(v) for k, v in small.items())
    wide = image_record("r2", **{f"note{i}": "x" * 300 for i in range(4)})
    assert sum(len(k) + len(v) for k, v in wide.items()) == 1252
    path = write_rows(image_folder / "d.jsonl", [small, wide])
    bounds = InputBounds(max_field_bytes=400, max_row_bytes=1000)
    loaded = load_dataset(path, bounds=bounds)
    assert [r.id for r in loaded.rows] == ["r1"]
    ((line, error),) = loaded.errors
    assert (line, error.row_id, error.field) == (2, "r2", "(row)")
    assert "line 2: its 7 fields hold 1,252 bytes (names and values)" in error.message
    assert "over the limit of 1,000 bytes per row (EVALQ_MAX_ROW_BYTES)" in error.message
    assert "'note0' (305 bytes)" in error.message  # the largest fields are named
    # The accounting is exact: a row of exactly the bound passes, one byte less refuses it.
    alone = write_rows(image_folder / "one.jsonl", [small])
    assert load_dataset(alone, bounds=InputBounds(max_row_bytes=size)).rows
    assert load_dataset(alone, bounds=InputBounds(max_row_bytes=size - 1)).errors


def test_a_csv_row_over_the_bytes_bound_fails_naming_its_physical_line(image_folder: Path) -> None:
    path = write_csv(
        image_folder / "d.csv",
        [
            ["id", "prompt", "image", "notes"],
            ["a", "two\nlines", "a.png", ""],
            ["b", "p" * 600, "a.png", "n" * 600],  # line 4
            ["c", "p", "a.png", ""],
        ],
    )
    loaded = load_dataset(path, bounds=InputBounds(max_row_bytes=1000))
    assert [r.id for r in loaded.rows] == ["a", "c"]
    ((line, error),) = loaded.errors
    assert (line, error.row_id, error.field) == (4, "b", "(row)")
    assert error.message.startswith("line 4: ")


# ---- values that could not be stored and read back ------------------------------------------


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def test_a_value_nested_255_levels_fails_only_its_row_naming_the_field(image_folder: Path) -> None:
    path = write_rows(
        image_folder / "d.jsonl",
        [
            image_record("ok"),
            image_record("deep", meta=nested(255)),
            image_record("ok2", meta={"a": nested(10)}),
        ],
    )
    loaded = load_dataset(path)
    assert [r.id for r in loaded.rows] == ["ok", "ok2"]
    ((line, error),) = loaded.errors
    assert (line, error.row_id) == (2, "deep")
    assert error.field == "meta" + "[0]" * MAX_VALUE_DEPTH
    assert f"nested more than {MAX_VALUE_DEPTH} levels deep" in error.message


def test_a_value_at_the_depth_bound_is_stored_and_read_back_whole(image_folder: Path) -> None:
    """The bound sits below what the row's JSON store reads: a row at it round-trips."""
    path = write_rows(image_folder / "d.jsonl", [image_record("r", meta=nested(MAX_VALUE_DEPTH))])
    (kept,) = load_dataset(path).rows
    assert RowInput.model_validate_json(kept.model_dump_json()) == kept
    over = write_rows(
        image_folder / "o.jsonl", [image_record("r", meta=nested(MAX_VALUE_DEPTH + 1))]
    )
    assert load_dataset(over).errors


def test_values_no_reader_takes_fail_only_their_line(image_folder: Path) -> None:
    path = image_folder / "d.jsonl"
    lines = [
        json.dumps(image_record("ok")),
        '{"id": "huge", "prompt": "p", "image": "a.png", "n": 1' + "0" * 5000 + "}",
        json.dumps(image_record("ok2")),
    ]
    path.write_text("\n".join(lines) + "\n")
    loaded = load_dataset(path)
    assert [r.id for r in loaded.rows] == ["ok", "ok2"]
    ((line, error),) = loaded.errors
    assert (line, error.field) == (2, "(line)")
    assert "not valid JSON" in error.message

    deep_cell = "[" * 100_000 + "]" * 100_000
    table = write_csv(
        image_folder / "d.csv",
        [
            ["id", "prompt", "image", "questions"],
            ["a", "p", "a.png", deep_cell],
            ["b", "p", "a.png", ""],
        ],
    )
    loaded = load_dataset(table, bounds=InputBounds(max_field_bytes=300_000))
    assert [r.id for r in loaded.rows] == ["b"]
    ((line, error),) = loaded.errors
    assert (line, error.row_id, error.field) == (2, "a", "questions")

    # A media cell in the seeds' JSON form, nested past what the JSON parser reads.
    deep_media = '{"contents": ' + deep_cell + "}"
    table = write_csv(
        image_folder / "m.csv",
        [["id", "prompt", "image"], ["a", "p", deep_media], ["b", "p", "a.png"]],
    )
    loaded = load_dataset(table, bounds=InputBounds(max_field_bytes=300_000))
    assert [r.id for r in loaded.rows] == ["b"]
    ((line, error),) = loaded.errors
    assert (line, error.row_id, error.field) == (2, "a", "(row)")
    assert error.message == "line 2: a value nests too deep to read"


# ---- bounds on the dataset: refused before anything is kept ---------------------------------


def test_a_dataset_over_the_rows_bound_is_refused_naming_it(image_folder: Path) -> None:
    path = write_rows(image_folder / "d.jsonl", [image_record(f"r{i}") for i in range(4)])
    assert load_dataset(path, bounds=InputBounds(max_rows_per_job=4)).total == 4
    with pytest.raises(DatasetError) as caught:
        load_dataset(path, bounds=InputBounds(max_rows_per_job=3))
    assert str(caught.value) == (
        f"{path}: more than 3 rows (line 4 is one too many), over the limit of 3 rows per job "
        "(EVALQ_MAX_ROWS_PER_JOB); nothing was submitted"
    )


def test_a_dataset_over_the_bytes_bound_is_refused_naming_it(image_folder: Path) -> None:
    path = write_rows(image_folder / "d.jsonl", [image_record(f"r{i}") for i in range(3)])
    size = path.stat().st_size
    assert load_dataset(path, bounds=InputBounds(max_dataset_bytes=size)).rows
    with pytest.raises(DatasetError) as caught:
        load_dataset(path, bounds=InputBounds(max_dataset_bytes=size - 1))
    assert f"{size:,} bytes, over the limit of {size - 1:,} bytes per dataset" in str(caught.value)
    assert "(EVALQ_MAX_DATASET_BYTES)" in str(caught.value)


def test_a_csv_over_the_columns_bound_is_refused_naming_it(image_folder: Path) -> None:
    header = ["id", "prompt", "image", *[f"c{i}" for i in range(7)]]
    path = write_csv(image_folder / "d.csv", [header, ["a", "p", "a.png", *["v"] * 7]])
    assert load_dataset(path, bounds=InputBounds(max_csv_columns=10)).rows
    with pytest.raises(DatasetError) as caught:
        load_dataset(path, bounds=InputBounds(max_csv_columns=9))
    assert "the CSV header has 10 columns, over the limit of 9 columns per CSV" in str(caught.value)
    assert "(EVALQ_MAX_CSV_COLUMNS)" in str(caught.value)


@pytest.mark.parametrize("value", [0, -1, True, 2.5, "100"])
def test_a_bound_that_is_no_positive_whole_number_is_refused(value: object) -> None:
    with pytest.raises(DatasetError, match="max_row_bytes must be a whole number of 1 or more"):
        InputBounds(max_row_bytes=value)  # type: ignore[arg-type]


# ---- unknown columns: one warning per dataset, bounded ---------------------------------------


def test_unknown_columns_are_warned_of_once_with_how_many_rows_have_them(
    image_folder: Path,
) -> None:
    path = write_rows(
        image_folder / "d.jsonl",
        [
            image_record("a", model="m1", note="x"),
            image_record("b", model="m2"),
            image_record("c", model="m3"),
        ],
    )
    loaded = load_dataset(path)
    assert [w for w in loaded.warnings if "unknown" in w] == [
        "unknown column(s) 'model' in 3 of 3 rows; 'note' in 1 of 3 rows: "
        "kept as extra, not read by the metric"
    ]
    assert loaded.rows[0].extra == {"model": "m1", "note": "x"}


def test_a_very_wide_csv_makes_one_short_warning_and_short_errors(image_folder: Path) -> None:
    wide = [f"column_{i:05d}" for i in range(5000)]
    header = ["id", "prompt", "image", *wide]
    rows = [header, *[[f"r{n}", "p", "a.png", *["v"] * 5000] for n in range(50)]]
    rows.append(["no-prompt", "", "a.png", *["v"] * 5000])
    path = write_csv(image_folder / "d.csv", rows)
    loaded = load_dataset(path, bounds=InputBounds(max_csv_columns=6000))
    assert len(loaded.rows) == 50 and all(len(r.extra) == 5000 for r in loaded.rows)
    (warning,) = [w for w in loaded.warnings if "unknown" in w]
    assert warning.startswith("unknown column(s) 'column_00000', 'column_00001'")
    assert "in 50 of 50 rows; and 4,980 more columns: kept as extra" in warning
    assert len(warning) < 1000
    ((_, error),) = loaded.errors
    assert error.field == "prompt" and "and 4,980 more: a typo?" in error.message
    assert len(str(error)) < 1000


def test_a_long_column_name_is_shortened_in_the_warning(image_folder: Path) -> None:
    name = "n" * 10_000
    path = write_rows(image_folder / "d.jsonl", [image_record("a", **{name: 1})])
    (warning,) = load_dataset(path).warnings
    assert "(9,940 more characters)" in warning and len(warning) < 300
