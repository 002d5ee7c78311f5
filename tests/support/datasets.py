"""Datasets as the tests write them: JSON Lines, one row per line."""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from PIL import Image


def write_rows(path: Path, rows: Iterable[object]) -> Path:
    """Write each row as one JSON line; a str is written as it is (a malformed line on
    purpose). Returns the path."""
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def png(path: Path, color: str = "red") -> Path:
    """A 64x64 image of one colour, written to `path`."""
    buf = io.BytesIO()
    Image.new("RGB", (64, 64), color).save(buf, format="PNG")
    path.write_bytes(buf.getvalue())
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
    one run_unit task. Returns the dataset's path."""
    folder.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    Image.new("RGB", (32, 32), color).save(buf, format="PNG")
    (folder / f"{color}.png").write_bytes(buf.getvalue())
    tag = uuid.uuid4().hex[:8]
    return write_rows(
        folder / "data.jsonl",
        (
            {
                "id": f"r{i}",
                "prompt": f"a {color} square",
                "image": f"{color}.png",
                "questions": [
                    {"question": f"Is it {color}? ({tag} {i} {q})", "answer": "yes"}
                    for q in range(questions)
                ],
            }
            for i in range(rows)
        ),
    )
