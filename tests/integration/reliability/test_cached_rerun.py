"""A rerun of a finished dataset with the call cache warm sends no run_unit task: prepare_row
answers every unit from the cache and aggregates the row itself. Real worker, real Redis, the
fake server over HTTP."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.conftest import FakeGemini
from tests.support.datasets import write_rows
from tests.support.results import scores

pytestmark = pytest.mark.integration


def colour_rows(folder: Path, rows: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i, color in zip(range(rows), ["red", "green", "blue", "white"], strict=False):
        buf = io.BytesIO()
        Image.new("RGB", (48, 48), color).save(buf, format="PNG")
        (folder / f"{color}.png").write_bytes(buf.getvalue())
        questions = [
            {"question": f"Is the picture {color}? (Cr {i})", "answer": "yes", "tag": "color"},
            {"question": f"Is there a cat? (Cr {i})", "answer": "no", "tag": "object"},
        ]
        out.append(
            {
                "id": f"cr{i}",
                "prompt": f"a {color} square",
                "image": f"{color}.png",
                "questions": questions,
            }
        )
    return write_rows(folder / "data.jsonl", out)


def test_a_cached_rerun_sends_no_unit_task_and_scores_the_same(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    data = colour_rows(tmp_path / "data", 4)
    first = client.wait(client.submit("gecko-image", data).job_id, timeout_s=120)
    assert (first.rows_done, first.units_inline) == (4, 0)
    assert first.unit_tasks == first.judge_calls == fake.stats()["requests"] == 8
    fake.reset()

    again = client.submit("gecko-image", data)
    second = client.wait(again.job_id, timeout_s=120)
    assert fake.stats()["requests"] == 0
    assert (second.unit_tasks, second.units_inline, second.cache_hits) == (0, 8, 8)
    assert (second.judge_calls, second.status, second.rows_done) == (0, "finished", 4)
    assert scores(client, again.job_id) == scores(client, first.job_id)
    assert second.mean_score == first.mean_score
