"""Datasets as the tests write them: JSON Lines, one row per line."""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Iterable
from pathlib import Path

from PIL import Image


def write_rows(path: Path, rows: Iterable[object]) -> Path:
    """Write each row as one JSON line; a str is written as it is (a malformed line on
    purpose). Returns the path."""
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


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
