"""The Python API: a DataFrame in, a handle to wait on, results back as a DataFrame."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import evalq
from evalq.core.errors import DatasetError
from tests.conftest import FakeGemini
from tests.support.datasets import png

pytestmark = pytest.mark.integration


def test_dataframe_in_dataframe_out(
    settings: Any, workers: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    png(tmp_path / "a.png", "red")
    fake.script([{"match": "Api-yes", "reply": "yes"}, {"match": "Api-no", "reply": "no"}])
    frame = pd.DataFrame(
        {
            "id": ["one", "two", "bad"],
            "prompt": ["p1", "p2", None],  # the third row has no prompt: it fails alone
            "image": ["a.png", "a.png", "a.png"],
            "questions": [
                [{"question": "Api-yes?", "answer": "yes", "tag": "color"}],
                [
                    {"question": "Api-yes?", "answer": "yes"},
                    {"question": "Api-no?", "answer": "yes"},
                ],
                None,
            ],
            "model_name": ["m1", "m2", "m3"],
        }
    )
    job = evalq.evaluate(frame, "gecko-image", base_dir=tmp_path, settings=settings)
    summary = job.wait(timeout_s=60)
    assert (
        summary["rows_total"],
        summary["rows_scored"],
        summary["rows_partial"],
        summary["rows_failed"],
    ) == (3, 2, 0, 1)
    assert summary["mean_score"] == pytest.approx(0.75)
    results = job.results()
    assert list(results["id"]) == ["one", "two", "bad"]
    assert list(results["score"][:2]) == [1.0, 0.5]
    assert pd.isna(results["score"][2])  # failed, not 0
    assert results["model_name"][0] == "m1"  # the user's own column name
    assert "tag:color" in results.columns
    assert evalq.Job(job.job_id, job.client).summary()["job_id"] == job.job_id
    assert not list(tmp_path.glob(".evalq-*.jsonl"))  # the temporary file is gone


def test_frame_that_is_no_dataset_raises(settings: Any, workers: Any, tmp_path: Path) -> None:
    with pytest.raises(DatasetError):
        evalq.evaluate(pd.DataFrame({"x": []}), "gecko-image", base_dir=tmp_path, settings=settings)
