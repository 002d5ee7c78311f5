"""The bounds reach the loader from the settings (EVALQ_ variables), and a submit's own
max_questions_per_row, max_row_bytes and max_field_bytes win over them (no Redis: prepare
checks a job without storing it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalq.client.submit import prepare
from evalq.core.errors import DatasetError
from evalq.worker.settings import Settings
from tests.support.datasets import png, write_rows


def red_square_rows(folder: Path, rows: int = 1, questions: int = 3) -> Path:
    png(folder / "a.png")
    asked = [{"question": f"Is part {i} red?", "answer": "yes"} for i in range(questions)]
    return write_rows(
        folder / "d.jsonl",
        [
            {"id": f"r{n}", "prompt": "red", "image": "a.png", "questions": asked}
            for n in range(rows)
        ],
    )


def test_the_settings_bound_a_row_and_a_submit_argument_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALQ_MAX_QUESTIONS_PER_ROW", "2")
    settings = Settings(api_key=None)
    assert settings.input_bounds().max_questions_per_row == 2
    path = red_square_rows(tmp_path)
    ((_, error),) = prepare(settings, "gecko-image", path, {}).dataset.errors
    assert "over the limit of 2 questions per row (EVALQ_MAX_QUESTIONS_PER_ROW)" in error.message
    assert prepare(settings, "gecko-image", path, {"max_questions_per_row": 3}).dataset.rows
    wide = {"max_questions_per_row": 3, "max_row_bytes": 100}
    ((_, error),) = prepare(settings, "gecko-image", path, wide).dataset.errors  # type: ignore[arg-type]
    assert error.field == "(row)" and "(EVALQ_MAX_ROW_BYTES)" in error.message


def test_the_dataset_bounds_come_from_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = red_square_rows(tmp_path, rows=3)
    monkeypatch.setenv("EVALQ_MAX_ROWS_PER_JOB", "2")
    with pytest.raises(DatasetError, match=r"over the limit of 2 rows per job"):
        prepare(Settings(api_key=None), "gecko-image", path, {})
    monkeypatch.setenv("EVALQ_MAX_ROWS_PER_JOB", "3")
    monkeypatch.setenv("EVALQ_MAX_DATASET_BYTES", "100")
    with pytest.raises(DatasetError, match=r"bytes per dataset \(EVALQ_MAX_DATASET_BYTES\)"):
        prepare(Settings(api_key=None), "gecko-image", path, {})


def test_a_submit_argument_that_is_no_bound_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="max_questions_per_row must be a whole number"):
        prepare(
            Settings(api_key=None),
            "gecko-image",
            red_square_rows(tmp_path),
            {"max_questions_per_row": 0},
        )
