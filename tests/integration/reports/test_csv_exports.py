"""CSV exports can't run code, through the real commands: `evalq results --format csv` and `evalq
leaderboard --csv` on jobs judged by a real worker, whose ids, prompts and labels a spreadsheet
would read as formulas. Those cells come out quoted; the scores stay numbers."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from statistics import fmean
from typing import Any

import pytest

from tests.conftest import FakeGemini, RedisServer, worker_env
from tests.support.cli import evalq_ok
from tests.support.datasets import png, write_rows

pytestmark = pytest.mark.integration

HOSTILE_IDS = ['=HYPERLINK("http://example.invalid","x")', "-2+3", "@SUM(A1:A2)", "plain"]


def test_results_and_leaderboard_csv_quote_formula_cells(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    png(tmp_path / "a.png")
    rows = [
        {
            "id": row_id,
            "prompt": f"+cmd|' /C calc'!A{n}",
            "image": "a.png",
            "questions": [{"question": f"Is the square red ({n})?", "answer": "yes"}],
        }
        for n, row_id in enumerate(HOSTILE_IDS)
    ]
    data = write_rows(tmp_path / "d.jsonl", rows)
    job_a = client.submit("gecko-image", data).job_id
    job_b = client.submit("gecko-image", data).job_id
    assert client.wait(job_a, timeout_s=120).status == "finished"
    assert client.wait(job_b, timeout_s=120).status == "finished"
    env = worker_env(redis_server.url, fake.url)

    text = evalq_ok(env, "results", job_a, "--format", "csv").stdout
    records = list(csv.DictReader(io.StringIO(text)))
    assert [r["id"] for r in records] == [
        "'" + HOSTILE_IDS[0],
        "'-2+3",
        "'@SUM(A1:A2)",
        "plain",
    ]
    assert all(r["prompt"].startswith("'+cmd|") for r in records)
    assert all(0.0 <= float(r["score"]) <= 1.0 for r in records)  # numbers, not quoted
    assert all(json.loads(r["questions"]) for r in records)

    board = tmp_path / "board.csv"
    evalq_ok(env, "leaderboard", f"=EVIL()={job_a}", f"@other={job_b}", "--csv", str(board))
    standings = list(csv.DictReader(io.StringIO(board.read_text(encoding="utf-8"))))
    assert sorted(r["candidate"] for r in standings) == ["'=EVIL()", "'@other"]
    mean = fmean(float(r["score"]) for r in records)
    assert all(float(r["mean"]) == pytest.approx(mean) for r in standings)
