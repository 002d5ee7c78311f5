"""The bounds on a submit, against real Redis and a real worker: rows over a row bound, or holding a
value that could not be stored, fail alone as input_error while the others are scored; a dataset
over a dataset bound is refused with nothing written to Redis; unknown columns warn once a job."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis

from evalq.client import Client
from evalq.core.errors import DatasetError
from evalq.worker.settings import Settings
from tests.conftest import FakeGemini
from tests.support.datasets import png, write_csv

pytestmark = pytest.mark.integration


def red_questions(count: int) -> list[dict[str, str]]:
    return [{"question": f"Is the square red ({i})?", "answer": "yes"} for i in range(count)]


def test_rows_over_a_bound_fail_alone_and_the_others_are_scored(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    png(tmp_path / "a.png")
    row = {"prompt": "a red square", "image": "a.png", "questions": red_questions(1)}
    deep: Any = "leaf"
    for _ in range(255):
        deep = [deep]
    lines = [
        json.dumps({"id": "ok1", **row, "note": "kept"}),
        json.dumps({**row, "id": "many", "questions": red_questions(4)}),
        json.dumps({**row, "id": "wide", **{f"n{i}": "x" * 400 for i in range(4)}}),
        json.dumps({**row, "id": "deep", "meta": deep}),
        '{"id": "huge", "prompt": "p", "image": "a.png", "n": 1' + "0" * 5000 + "}",
        json.dumps({"id": "ok2", **row, "note": "kept too"}),
    ]
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(lines) + "\n")
    job = client.submit("gecko-image", data, max_questions_per_row=3, max_row_bytes=1500).job_id
    summary = client.wait(job, timeout_s=120)
    assert summary.status == "finished"
    assert summary.rows_done == summary.rows_total == 6
    results = {r.id: r for r in client.results(job)}
    assert {k for k, r in results.items() if r.status == "scored"} == {"ok1", "ok2"}
    assert set(client.inputs(job)) == {"ok1", "ok2"}  # only the good rows were stored
    expected = {
        "many": (2, "questions", "over the limit of 3 questions per row"),
        "wide": (3, "(row)", "over the limit of 1,500 bytes per row (EVALQ_MAX_ROW_BYTES)"),
        "deep": (4, "meta" + "[0]" * 64, "nested more than 64 levels deep"),
        "5": (5, "(line)", "not valid JSON"),
    }
    for row_id, (line, field, says) in expected.items():
        failed = results[row_id]
        assert (failed.status, failed.reason, failed.line) == ("failed", "input_error", line)
        assert f"field {field!r}" in (failed.error or "") and says in (failed.error or "")
    assert summary.rows_failed_by_reason == {"input_error": 4}
    unknown = [w for w in summary.warnings if "unknown column" in w]
    assert unknown == [
        "unknown column(s) 'note' in 2 of 2 rows: kept as extra, not read by the metric"
    ]


@pytest.mark.parametrize(
    ("bound", "says"),
    [
        ({"max_rows_per_job": 3}, "over the limit of 3 rows per job (EVALQ_MAX_ROWS_PER_JOB)"),
        (
            {"max_dataset_bytes": 100},
            "over the limit of 100 bytes per dataset (EVALQ_MAX_DATASET_BYTES)",
        ),
        ({"max_csv_columns": 5}, "columns per CSV (EVALQ_MAX_CSV_COLUMNS)"),
    ],
)
def test_a_dataset_over_a_bound_is_refused_with_nothing_written(
    scratch_url: str, tmp_path: Path, bound: dict[str, Any], says: str
) -> None:
    """On a database no worker watches: the refused submit leaves it empty (no job, no row, no
    message in the broker), and the same submit within its bounds writes the job."""
    png(tmp_path / "a.png")
    header = ["id", "prompt", "image", *(f"c{i}" for i in range(3))]
    rows = ([f"r{n}", "red", "a.png", "v", "v", "v"] for n in range(4))
    data = write_csv(tmp_path / "d.csv", [header, *rows])
    db = redis.Redis.from_url(scratch_url)
    try:
        refusing = Client(Settings(redis_url=scratch_url, api_key=None, **bound))
        with pytest.raises(DatasetError) as caught:
            refusing.submit("gecko-image", data)
        assert says in str(caught.value) and "nothing was submitted" in str(caught.value)
        assert db.dbsize() == 0
        job = Client(Settings(redis_url=scratch_url, api_key=None)).submit("gecko-image", data)
        assert db.exists(f"evalq:job:{job.job_id}") == 1
    finally:
        db.close()
