"""Dataset loading: row-level errors name the row and field; non-datasets fail up front."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalq.core.data_roots import DataRoots
from evalq.core.dataset import load_dataset
from evalq.core.errors import DatasetError
from evalq.core.media import MediaRules
from evalq.core.media.gcs import GcsMedia
from tests.support.datasets import write_rows
from tests.support.images import PNG_SIGNATURE


@pytest.fixture
def img_folder(tmp_path: Path) -> Path:
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "a.png").write_bytes(PNG_SIGNATURE)
    return tmp_path


def test_jsonl_rows_ids_and_relative_paths(img_folder: Path) -> None:
    path = write_rows(
        img_folder / "d.jsonl",
        [
            {"id": "first", "prompt": "a cat", "image": "img/a.png"},
            {"prompt": "a dog", "image": str(img_folder / "img" / "a.png")},
        ],
    )
    loaded = load_dataset(path)
    assert [r.id for r in loaded.rows] == ["first", "2"]
    assert loaded.rows[0].image.kind == "path"
    assert loaded.rows[0].image.value == str((img_folder / "img" / "a.png").resolve())
    assert not loaded.errors


def test_bad_rows_name_row_and_field_and_others_go_on(img_folder: Path) -> None:
    path = write_rows(
        img_folder / "d.jsonl",
        [
            {"id": "ok", "prompt": "fine", "image": "img/a.png"},
            {"id": "no-prompt", "image": "img/a.png"},
            {"id": "no-image-file", "prompt": "x", "image": "img/missing.png"},
            {"id": "typo", "promt": "x", "image": "img/a.png"},
            "{not json",
            {"id": "badq", "prompt": "x", "image": "img/a.png", "questions": [{"question": "q?"}]},
        ],
    )
    loaded = load_dataset(path)
    assert [r.id for r in loaded.rows] == ["ok"]
    messages = {e.row_id: (e.field, e.message) for _, e in loaded.errors}
    assert messages["no-prompt"][0] == "prompt"
    assert messages["no-image-file"][0] == "image"
    assert "file not found" in messages["no-image-file"][1]
    assert messages["typo"][0] == "prompt"
    assert "'promt'" in messages["typo"][1]
    assert messages["5"][0] == "(line)"
    assert messages["badq"][0] == "questions[0].answer"
    assert loaded.total == 6


def test_unknown_extra_columns_are_kept_with_a_warning(img_folder: Path) -> None:
    path = write_rows(
        img_folder / "d.jsonl", [{"prompt": "p", "image": "img/a.png", "model": "m1"}]
    )
    loaded = load_dataset(path)
    assert loaded.rows[0].extra == {"model": "m1"}
    assert "unknown column(s) 'model'" in loaded.warnings[0]


def test_questions_replace_rubric(img_folder: Path) -> None:
    path = write_rows(
        img_folder / "d.jsonl",
        [
            {
                "prompt": "p",
                "image": "img/a.png",
                "questions": [{"question": "Is it red?", "answer": "Yes", "tag": "color"}],
            }
        ],
    )
    (question,) = load_dataset(path).rows[0].questions or []
    assert (question.expected, question.tag, question.choices) == ("yes", "color", ["yes", "no"])


def test_csv_with_json_questions_and_content_form(img_folder: Path) -> None:
    content = json.dumps(
        {
            "contents": [
                {"parts": [{"file_data": {"mime_type": "image/png", "file_uri": "gs://bkt/x.png"}}]}
            ]
        }
    )
    path = img_folder / "d.csv"
    import csv

    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "prompt", "image", "questions"])
        writer.writerow(["a", "a red cat", "img/a.png", ""])
        writer.writerow(
            ["b", "a dog", content, json.dumps([{"question": "dog?", "answer": "yes"}])]
        )
        writer.writerow(["c", "", "img/a.png", ""])
    rules = MediaRules(roots=DataRoots.of([img_folder]), gcs=GcsMedia.of(["gs://bkt"]))
    loaded = load_dataset(path, rules=rules)
    assert [r.id for r in loaded.rows] == ["a", "b"]
    assert loaded.rows[1].image.kind == "file_uri"
    assert loaded.rows[1].image.mime_type == "image/png"
    assert loaded.errors[0][1].field == "prompt"
    assert loaded.errors[0][0] == 4  # file line number


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("d.jsonl", "this is prose\nnot a dataset\n"),
        ("d.csv", "a,b\n1,2\n"),
        ("d.jsonl", ""),
        ("d.txt", "hello"),
        ("d.jsonl", "[1]\n[2]\n"),
    ],
)
def test_not_a_dataset_fails_before_anything(img_folder: Path, name: str, content: str) -> None:
    path = img_folder / name
    path.write_text(content)
    with pytest.raises(DatasetError):
        load_dataset(path)


def test_binary_file_is_not_a_dataset(img_folder: Path) -> None:
    path = img_folder / "d.jsonl"
    path.write_bytes(b"\xff\xfe\x00garbage\x9c")
    with pytest.raises(DatasetError):
        load_dataset(path)


def test_missing_file(img_folder: Path) -> None:
    with pytest.raises(DatasetError, match="no such file"):
        load_dataset(img_folder / "nope.jsonl")


@pytest.mark.parametrize(
    ("metric", "record", "column"),
    [
        ("gecko-image", {"prompt": "a cat", "picture": "img/a.png"}, "image"),
        ("gecko-video", {"prompt": "a cat", "clip": "v.mp4"}, "video"),
        ("groundedness", {"query": "q", "ctx": "c", "response": "r"}, "context"),
        ("pairwise", {"prompt": "q", "answer_1": "a", "answer_2": "b"}, "response_a"),
        ("pairwise", {"prompt": "q", "response": "a"}, "baseline_model_response"),
    ],
)
def test_a_column_that_no_row_has_refuses_the_whole_dataset(
    img_folder: Path, metric: str, record: dict[str, str], column: str
) -> None:
    path = write_rows(img_folder / "d.jsonl", [{"id": str(i), **record} for i in range(3)])
    with pytest.raises(DatasetError) as caught:
        load_dataset(path, metric)
    message = str(caught.value)
    assert f"'{column}'" in message
    assert "columns present: " + ", ".join(sorted({"id", *record})) in message


def test_a_column_some_rows_have_fails_only_the_rows_without_it(img_folder: Path) -> None:
    path = write_rows(
        img_folder / "d.jsonl",
        [{"id": "ok", "prompt": "a cat", "image": "img/a.png"}, {"id": "bad", "prompt": "a dog"}],
    )
    loaded = load_dataset(path)
    assert [r.id for r in loaded.rows] == ["ok"]
    assert [(e.row_id, e.field) for _, e in loaded.errors] == [("bad", "image")]
    only_bad = write_rows(
        img_folder / "e.jsonl", [{"id": "x", "prompt": "p", "image": "img/no.png"}]
    )
    loaded = load_dataset(only_bad)  # the column is there, its file is not: a row's own error
    assert [(e.row_id, e.field) for _, e in loaded.errors] == [("x", "image")]


@pytest.mark.parametrize(
    ("metric", "record", "field", "kind"),
    [
        ("groundedness", {"query": "q", "context": {"nested": "object"}}, "context", "dict"),
        ("groundedness", {"query": "q", "context": ["a", "list"]}, "context", "list"),
        ("pointwise", {"response": True}, "response", "bool"),
    ],
)
def test_a_field_of_another_kind_than_text_is_named_for_what_it_is_not_missing(
    img_folder: Path, metric: str, record: dict[str, object], field: str, kind: str
) -> None:
    rows = [{"id": "ok", "query": "q", "context": "c", "response": "r"}, {"id": "odd", **record}]
    options = {"template": "fluency"} if metric == "pointwise" else {}
    loaded = load_dataset(write_rows(img_folder / "d.jsonl", rows), metric, options)
    (only,) = loaded.errors
    error = only[1]
    assert (error.row_id, error.field) == ("odd", field)
    assert error.message == f"must be text, got {kind}"
