"""Datasets as the tests write them (JSON Lines, one row per line, or CSV) and read them back
through the dataset loader, and the images their rows name."""

from __future__ import annotations

import csv
import json
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from evalq.core.dataset import load_dataset
from evalq.core.errors import DatasetError
from evalq.core.models import RowInput
from tests.support.images import png_bytes


def write_rows(path: Path, rows: Iterable[object]) -> Path:
    """Write each row as one JSON line; a str is written as it is (a malformed line on
    purpose). Returns the path."""
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def loaded_rows(folder: Path, metric: str, rows: list[Any], **options: Any) -> list[RowInput]:
    """`rows` written as `folder`/d.jsonl and read back by the dataset loader for `metric`
    (`options`: load_dataset's)."""
    return load_dataset(write_rows(folder / "d.jsonl", rows), metric, **options).rows


def loaded_row(folder: Path, metric: str, record: dict[str, Any], **options: Any) -> RowInput:
    """The one row a dataset of `record` alone loads as (see loaded_rows)."""
    (row,) = loaded_rows(folder, metric, [record], **options)
    return row


def load_refusal(path: Path, *args: Any) -> str:
    """Why the dataset loader refuses `path`, as it must (`args`: load_dataset's after it)."""
    with pytest.raises(DatasetError) as caught:
        load_dataset(path, *args)
    return str(caught.value)


def write_csv(path: Path, rows: Iterable[list[str]]) -> Path:
    """Write each row as one CSV record (the first is the header). Returns the path."""
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    return path


def png(path: Path, color: str = "red") -> Path:
    """A 64x64 image of one colour, written to `path`."""
    path.write_bytes(png_bytes(color=color))
    return path


def yes_no(question: str, answer: str = "yes", tag: str = "object") -> dict[str, str]:
    """A dataset's own Gecko question with the answer the rubric expects."""
    return {"question": question, "answer": answer, "tag": tag}


def one_row(image: Path, questions: list[dict[str, str]]) -> Path:
    """A gecko-image dataset of one row, id "r", asking its own `questions` of `image`,
    written beside the image as d.jsonl."""
    row = {"id": "r", "prompt": "p", "image": str(image), "questions": questions}
    return write_rows(image.parent / "d.jsonl", [row])


def one_question_row(folder: Path, question: str = "q?") -> Path:
    """A gecko-image dataset of one row, id "r", asking one question of one red image."""
    return one_row(png(folder / "a.png"), [yes_no(question)])


def marked_rows(image: Path, marker: str, rows: int, questions: int) -> list[dict[str, Any]]:
    """gecko-image rows r0, r1, … on `image`, row i asking questions `MARKER-i-j?` (j below
    `questions`): one scripted rule matching `MARKER-` answers every call of the job."""
    return [
        {
            "id": f"r{i}",
            "prompt": "p",
            "image": str(image),
            "questions": [yes_no(f"{marker}-{i}-{j}?") for j in range(questions)],
        }
        for i in range(rows)
    ]


def uncached_gecko_rows(folder: Path, rows: int, questions: int, color: str = "red") -> Path:
    """gecko-image rows on one small square of `color`, each with its own questions, worded
    afresh on every call so that no reply an earlier test cached answers them: each question is
    one run_unit task; with `questions` 0 a row has none, so the judge writes them first (a
    call, then the row's questions' calls after it). Returns the dataset's path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{color}.png").write_bytes(png_bytes(32, color=color))
    tag = uuid.uuid4().hex[:8]
    return write_rows(
        folder / "data.jsonl",
        (
            {
                "id": f"r{i}",
                "prompt": f"a {color} square",
                "image": f"{color}.png",
            }
            | (
                {
                    "questions": [
                        {"question": f"Is it {color}? ({tag} {i} {q})", "answer": "yes"}
                        for q in range(questions)
                    ]
                }
                if questions
                else {}
            )
            for i in range(rows)
        ),
    )


def qa_rows(folder: Path, marker: str, rows: int = 4) -> Path:
    """Pointwise rows r0, r1, …, each a question and its answer, whose judge calls a script
    rule finds by `marker`; written as `folder`/d.jsonl."""
    folder.mkdir(parents=True, exist_ok=True)
    return write_rows(
        folder / "d.jsonl",
        (
            {"id": f"r{i}", "prompt": f"{marker} question {i}?", "response": f"answer {i}"}
            for i in range(rows)
        ),
    )


def uncached_fluency_rows(folder: Path, rows: int = 3) -> Path:
    """Pointwise rows r0, r1, … of a response alone (all the fluency template reads), worded
    afresh on every call so that no reply an earlier test cached answers them; written as
    `folder`/d.jsonl."""
    marker = uuid.uuid4().hex[:8]
    return write_rows(
        folder / "d.jsonl",
        ({"id": f"r{i}", "response": f"{marker} answer {i}"} for i in range(rows)),
    )
