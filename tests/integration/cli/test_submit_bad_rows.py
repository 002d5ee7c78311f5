"""A submit with hostile rows, against real Redis and a real worker: a 2 MB field and a lone
surrogate each fail their own row as input_error; the other rows are enqueued and scored."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeGemini
from tests.support.datasets import png

pytestmark = pytest.mark.integration
QUESTIONS = [{"question": "Is it red?", "answer": "yes", "tag": "color"}]


def check_job(client: Any, data: Path, bad: dict[str, tuple[int, str]]) -> None:
    submitted = client.submit("gecko-image", data)
    job = submitted.job_id
    summary = client.wait(job, timeout_s=120)
    results = {r.id: r for r in client.results(job)}
    assert summary.status == "finished"
    assert summary.rows_done == summary.rows_total == 4
    assert {k for k, r in results.items() if r.status == "scored"} == {"ok1", "ok2"}
    assert set(client.inputs(job)) == {"ok1", "ok2"}  # only good rows are stored and enqueued
    for row_id, (line, field) in bad.items():
        row = results[row_id]
        assert (row.status, row.reason, row.line) == ("failed", "input_error", line)
        assert f"field {field!r}" in (row.error or "")
        assert f"line {line}" in (row.error or "")
    assert summary.rows_failed == 2
    assert summary.rows_failed_by_reason == {"input_error": 2}


def test_jsonl_big_field_and_lone_surrogate_fail_alone(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    png(tmp_path / "a.png")
    data = tmp_path / "d.jsonl"
    row = {"prompt": "red", "image": "a.png", "questions": QUESTIONS}
    data.write_text(
        json.dumps({"id": "ok1", **row})
        + "\n"
        + json.dumps({**row, "id": "big", "prompt": "red " * 500_000})
        + "\n"
        + json.dumps({**row, "id": "bad-text", "prompt": "red \ud800"})  # the "\ud800" escape
        + "\n"
        + json.dumps({"id": "ok2", **row})
        + "\n"
    )
    check_job(client, data, {"big": (2, "prompt"), "bad-text": (3, "prompt")})


def test_csv_big_field_and_lone_surrogate_fail_alone(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    png(tmp_path / "a.png")
    data = tmp_path / "d.csv"
    bad_questions = json.dumps([{"question": "Is it \ud800?", "answer": "yes"}])
    with data.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "prompt", "image", "questions"])
        writer.writerow(["ok1", "red\nand more", "a.png", json.dumps(QUESTIONS)])  # lines 2-3
        writer.writerow(["big", "red " * 500_000, "a.png", json.dumps(QUESTIONS)])
        writer.writerow(["bad-text", "red", "a.png", bad_questions])
        writer.writerow(["ok2", "red", "a.png", json.dumps(QUESTIONS)])
    check_job(client, data, {"big": (4, "prompt"), "bad-text": (5, "questions[0].question")})
