"""Reading dataset files: CSV parsed as CSV (quoted line breaks kept, physical line numbers,
warnings for quotes that swallow lines), one size limit per field in both formats, and strings
that can't be stored failing only their own row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalq.core.bounds import InputBounds
from evalq.core.dataset import load_dataset
from evalq.core.errors import DatasetError, InputError
from tests.support.datasets import write_csv, write_rows

MIB = 1024 * 1024


def errors_by_line(loaded: object) -> dict[int, InputError]:
    return dict(loaded.errors)  # type: ignore[attr-defined]


def test_every_loaded_row_can_be_stored(image_folder: Path) -> None:
    """The rows a load returns are what the producer stores as JSON."""
    path = image_folder / "d.jsonl"
    path.write_text('{"prompt": "fine", "image": "a.png"}\n')
    for row in load_dataset(path).rows:
        row.model_dump_json()


# ---- CSV read as CSV ------------------------------------------------------------------------


def test_csv_quoted_line_breaks_are_kept_and_lines_are_physical(image_folder: Path) -> None:
    path = write_csv(
        image_folder / "d.csv",
        [
            ["id", "prompt", "image"],
            ["a", "a red circle\nnext to a square", "a.png"],  # lines 2-3
            ["b", "", "a.png"],  # line 4: no prompt
            ["c", "one\n\ntwo, three", "a.png"],  # lines 5-7
            ["d", "a dog", "a.png"],  # line 8
        ],
    )
    loaded = load_dataset(path)
    rows = {r.id: r for r in loaded.rows}
    assert rows["a"].prompt == "a red circle\nnext to a square"
    assert rows["c"].prompt == "one\n\ntwo, three"
    assert {k: r.line for k, r in rows.items()} == {"a": 2, "c": 5, "d": 8}
    ((line, error),) = loaded.errors
    assert (line, error.row_id, error.field) == (4, "b", "prompt")
    assert loaded.warnings == []  # properly quoted line breaks are no cause for a warning


def test_csv_unclosed_quote_is_warned_about_naming_its_lines(image_folder: Path) -> None:
    path = image_folder / "d.csv"
    path.write_text(
        "id,prompt,image\n"
        'a,"a cat,a.png\n'  # line 2: the quote is never closed
        "b,a dog,a.png\n"
        'c,"a bird",a.png\n'
        "d,a fish,a.png\n"
    )
    loaded = load_dataset(path)
    merged = [w for w in loaded.warnings if "line 2" in w]
    assert merged, loaded.warnings
    assert "lines 2-4" in merged[0]
    assert "quote" in merged[0]
    assert [r.line for r in loaded.rows if r.id == "d"] == [5]


def test_a_quote_that_swallows_the_whole_file_is_named_in_the_refusal(image_folder: Path) -> None:
    """Every line merged into one cell: the dataset is refused, and the error says why."""
    path = image_folder / "d.csv"
    path.write_text('prompt,image\n"a red square,a.png\na red square,a.png\na circle,a.png\n')
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    message = str(info.value)
    assert "no row has a value for 'image'" in message
    assert "lines 2-4 were read as one row" in message


def test_csv_text_after_a_closing_quote_is_warned_about(image_folder: Path) -> None:
    path = image_folder / "d.csv"
    path.write_text('id,prompt,image\na,"a cat" in a hat,a.png\nb,"a dog",a.png\n')
    loaded = load_dataset(path)
    assert len(loaded.rows) == 2
    assert [w for w in loaded.warnings if "line 2" in w and "quote" in w]
    assert not [w for w in loaded.warnings if "line 3" in w]


def test_csv_row_with_more_cells_than_columns_fails_alone_naming_its_line(
    image_folder: Path,
) -> None:
    path = image_folder / "d.csv"
    path.write_text(
        'id,prompt,image\na,"multi\nline",a.png\nb,a cat, sitting,a.png\nc,a dog,a.png,,\n'
    )
    loaded = load_dataset(path)
    assert [r.id for r in loaded.rows] == ["a", "c"]  # empty trailing cells swallow nothing
    ((line, error),) = loaded.errors
    assert line == 4
    assert "4 cells" in error.message and "3 columns" in error.message


def test_csv_blank_lines_are_skipped_but_counted(image_folder: Path) -> None:
    path = image_folder / "d.csv"
    path.write_text("id,prompt,image\n\na,a cat,a.png\n , , \nb,a dog,a.png\n")
    loaded = load_dataset(path)
    assert [(r.id, r.line) for r in loaded.rows] == [("a", 3), ("b", 5)]
    assert not loaded.errors


def test_csv_crlf_file_with_bom(image_folder: Path) -> None:
    path = image_folder / "d.csv"
    path.write_bytes(b'\xef\xbb\xbfid,prompt,image\r\na,"two\r\nlines",a.png\r\nb,x,a.png\r\n')
    loaded = load_dataset(path)
    assert [(r.id, r.line) for r in loaded.rows] == [("a", 2), ("b", 4)]
    assert "two" in loaded.rows[0].prompt and "lines" in loaded.rows[0].prompt


def test_jsonl_line_separator_characters_inside_strings_stay_in_one_row(image_folder: Path) -> None:
    path = image_folder / "d.jsonl"
    rows = [
        {"prompt": f"before{sep}after", "image": "a.png"} for sep in ("\u2028", "\x85", "\u2029")
    ]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    loaded = load_dataset(path)
    assert not loaded.errors
    assert [r.prompt for r in loaded.rows] == [r["prompt"] for r in rows]
    assert [r.line for r in loaded.rows] == [1, 2, 3]


def test_not_utf8_names_the_line(image_folder: Path) -> None:
    path = image_folder / "d.csv"
    path.write_bytes(b"id,prompt,image\na,a cat,a.png\nb,caf\xe9,a.png\n")
    with pytest.raises(DatasetError, match=r"line 3.*UTF-8"):
        load_dataset(path)


# ---- one size limit per field ----------------------------------------------------------------


def test_jsonl_field_over_the_limit_fails_only_its_row(image_folder: Path) -> None:
    path = image_folder / "d.jsonl"
    rows = [
        {"id": "ok", "prompt": "a cat", "image": "a.png"},
        {"id": "big", "prompt": "x" * (2 * MIB), "image": "a.png"},
        {"id": "big-q", "prompt": "p", "image": "a.png", "questions": [{"question": "y" * MIB}]},
        {"id": "ok2", "prompt": "a dog", "image": "a.png"},
    ]
    write_rows(path, rows)
    loaded = load_dataset(path)
    assert [r.id for r in loaded.rows] == ["ok", "ok2"]
    errors = errors_by_line(loaded)
    assert (errors[2].row_id, errors[2].field) == ("big", "prompt")
    assert "line 2" in errors[2].message and "limit" in errors[2].message
    assert (errors[3].row_id, errors[3].field) == ("big-q", "questions")


def test_an_oversized_id_names_the_row_by_its_line(image_folder: Path) -> None:
    path = image_folder / "d.jsonl"
    path.write_text(json.dumps({"id": "i" * 5000, "prompt": "p", "image": "a.png"}) + "\n")
    loaded = load_dataset(path, bounds=InputBounds(max_field_bytes=1000))
    ((line, error),) = loaded.errors
    assert (line, error.row_id, error.field) == (1, "1", "id")


def test_csv_field_over_the_limit_fails_only_its_row_naming_the_right_line(
    image_folder: Path,
) -> None:
    path = write_csv(
        image_folder / "d.csv",
        [
            ["id", "prompt", "image"],
            ["a", "two\nlines", "a.png"],
            ["b", "z" * (MIB + 10), "a.png"],  # line 4
            ["c", "a dog", "a.png"],
        ],
    )
    loaded = load_dataset(path)
    assert [(r.id, r.line) for r in loaded.rows] == [("a", 2), ("c", 5)]
    ((line, error),) = loaded.errors
    assert (line, error.row_id, error.field) == (4, "b", "prompt")
    assert "line 4" in error.message


def test_the_limit_is_an_argument(image_folder: Path) -> None:
    path = image_folder / "d.jsonl"
    path.write_text(json.dumps({"prompt": "é" * 60, "image": "a.png"}) + "\n")  # 120 bytes
    assert load_dataset(path, bounds=InputBounds(max_field_bytes=120)).rows
    ((_, error),) = load_dataset(path, bounds=InputBounds(max_field_bytes=119)).errors
    assert error.field == "prompt" and "120" in error.message


# ---- strings that can't be stored fail their own row -----------------------------------------


def test_lone_surrogates_fail_their_row_naming_the_field(image_folder: Path) -> None:
    path = image_folder / "d.jsonl"
    path.write_text(
        '{"id": "ok", "prompt": "fine", "image": "a.png"}\n'
        '{"id": "s1", "prompt": "bad \\ud800 text", "image": "a.png"}\n'
        '{"id": "s2", "prompt": "p", "image": "a.png", '
        '"questions": [{"question": "Is it \\udc00?", "answer": "yes"}]}\n'
        '{"id": "s3", "prompt": "p", "image": "a.png", "model\\ud83d": "m"}\n'
        '{"id": "\\ud800", "prompt": "p", "image": "a.png"}\n'
        '{"id": "ok2", "prompt": "fine \\ud83d\\ude00", "image": "a.png"}\n'
    )
    loaded = load_dataset(path)
    assert [r.id for r in loaded.rows] == ["ok", "ok2"]
    assert loaded.rows[1].prompt == "fine \U0001f600"  # a proper pair is one character
    errors = errors_by_line(loaded)
    assert (errors[2].row_id, errors[2].field) == ("s1", "prompt")
    assert (errors[3].row_id, errors[3].field) == ("s2", "questions[0].question")
    assert errors[4].row_id == "s3" and errors[4].field == "model\\ud83d"
    assert (errors[5].row_id, errors[5].field) == ("5", "id")
    for error in errors.values():
        assert "surrogate" in error.message
        str(error).encode("utf-8")  # the error itself can be stored and printed
    for row in loaded.rows:
        row.model_dump_json()
    for warning in loaded.warnings:
        warning.encode("utf-8")


def test_lone_surrogate_in_a_csv_json_cell_fails_its_row(image_folder: Path) -> None:
    questions = '[{"question": "Is it \\ud800?", "answer": "yes"}]'
    path = write_csv(
        image_folder / "d.csv",
        [
            ["id", "prompt", "image", "questions"],
            ["a", "p", "a.png", questions],
            ["b", "p", '{"file_data": {"file_uri": "gs://b/\\udfff.png"}}', ""],
            ["c", "p", "a.png", ""],
        ],
    )
    loaded = load_dataset(path)
    assert [r.id for r in loaded.rows] == ["c"]
    errors = errors_by_line(loaded)
    assert (errors[2].row_id, errors[2].field) == ("a", "questions[0].question")
    assert (errors[3].row_id, errors[3].field) == ("b", "image.file_data.file_uri")
