"""Several candidates in one job, on a real stack: the comparison example's combined dataset
(`exact` and `sloppy` as media columns) plus a third candidate whose file is missing on one
row. Each prompt's rubric is written once for all its candidates, a missing file fails only
that candidate's cell, and `evalq compare JOB` / `evalq leaderboard JOB` compare the
candidates of the one job."""

from __future__ import annotations

import csv
import io
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeGemini, RedisServer, worker_env
from tests.support.cli import evalq_long_ok

pytestmark = pytest.mark.integration


def three_candidates(dest: Path) -> tuple[Path, int]:
    """The example's combined dataset with a third column, `copy`: exact's images again, but
    the first row's file does not exist."""
    from evalq.examples.comparison import write_comparison_example

    example = write_comparison_example(dest)
    rows = [json.loads(line) for line in example.candidates.read_text().splitlines()]
    for i, row in enumerate(rows):
        row["copy"] = "images/gone.png" if i == 0 else row["exact"]
        row["half"] = "first" if i < len(rows) // 2 else "second"  # a column to group by
    path = dest / "three.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path, len(rows)


def test_candidates_share_a_rubric_and_fail_alone(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    dataset, prompts = three_candidates(tmp_path / "example")
    first_id = json.loads(dataset.read_text().splitlines()[0])["id"]
    # A rubric model of this test's own: the rubric cache is empty for it, and the fake
    # server counts its calls apart from the validator's.
    writer = f"rubric-{uuid.uuid4().hex[:8]}"
    names = ["exact", "sloppy", "copy"]
    # Rubric calls answer slowly, so a prompt's three cells are planned while its rubric is
    # still being written (the worker runs 8 threads): without a claim each would ask.
    fake.script([{"match": "You write verification questions", "delay_ms": 1500}])
    submitted = client.submit(
        "gecko-image",
        dataset,
        judge_model="cells-test-judge",
        options={"candidates": names, "rubric_model": writer},
    )
    job_id = submitted.job_id
    assert submitted.dataset.total == 3 * prompts
    summary = client.wait(job_id, timeout_s=240)
    assert summary.status == "finished" and summary.rows_total == 3 * prompts

    # One rubric per prompt, whichever of its three cells was planned first.
    assert fake.stats()["by_model"][writer] == prompts
    assert summary.rubric_cache_hits == 2 * prompts - 1  # the failed cell asks for none

    rows = client.results(job_id)
    assert [r.candidate for r in rows[:3]] == names  # dataset order, then candidate order
    cells = {(r.id, r.candidate): r for r in rows}
    assert len(cells) == 3 * prompts
    gone = cells[(first_id, "copy")]
    assert gone.status == "failed" and gone.reason == "input_error"
    assert "candidate 'copy'" in (gone.error or "") and "'copy'" in (gone.error or "")
    for name in ("exact", "sloppy"):  # the row's other candidates scored
        assert cells[(first_id, name)].score is not None
    for row_id in {r.id for r in rows}:
        asked = [
            [q.question for q in cells[(row_id, n)].questions]
            for n in names
            if cells[(row_id, n)].status != "failed"
        ]
        assert all(a == asked[0] for a in asked), row_id  # the same rubric for every candidate
    # copy draws what exact draws: the same answers wherever both scored.
    for row_id in {r.id for r in rows} - {first_id}:
        assert cells[(row_id, "copy")].score == cells[(row_id, "exact")].score

    assert list(summary.candidates) == names
    exact, sloppy, copy = (summary.candidates[n] for n in names)
    assert exact.rows == sloppy.rows == copy.rows == prompts
    assert copy.rows_failed == 1 and exact.rows_failed == 0
    assert exact.mean_score is not None and sloppy.mean_score is not None
    assert exact.mean_score > sloppy.mean_score and exact.ci95 is not None

    env = worker_env(redis_server.url, fake.url, COLUMNS="200")
    status = evalq_long_ok(env, "status", job_id).stdout
    assert "candidate exact" in status and "candidate copy" in status

    data = json.loads(evalq_long_ok(env, "compare", job_id, "--json").stdout)
    pairs = {(p["a"], p["b"]): p for p in data["pairs"]}
    assert set(pairs) == {("exact", "sloppy"), ("exact", "copy"), ("sloppy", "copy")}
    assert data["aligned_by"] == "id"
    pair = pairs[("exact", "sloppy")]
    assert pair["counts"]["paired"] == prompts
    diffs = [
        (cells[(i, "exact")].score or 0.0) - (cells[(i, "sloppy")].score or 0.0)
        for i in {r.id for r in rows}
    ]
    assert pair["overall"]["mean_diff"] == pytest.approx(sum(diffs) / len(diffs))
    assert pair["overall"]["mean_diff"] > 0
    assert pairs[("exact", "copy")]["counts"]["unscored_b"] == 1
    assert pairs[("exact", "copy")]["overall"]["mean_diff"] == pytest.approx(0.0)

    named = json.loads(
        evalq_long_ok(env, "compare", f"{job_id}:exact", f"{job_id}:sloppy", "--json").stdout
    )
    (only,) = named["pairs"]
    assert only["overall"]["mean_diff"] == pytest.approx(pair["overall"]["mean_diff"])

    board = json.loads(evalq_long_ok(env, "leaderboard", job_id, "--json").stdout)
    assert board["candidates"][-1]["candidate"] == "sloppy"
    halves = json.loads(
        evalq_long_ok(env, "leaderboard", job_id, "--group-by", "half", "--json").stdout
    )
    assert [g["value"] for g in halves["groups"]] == ["first", "second"]
    assert sum(g["rows_common"] for g in halves["groups"]) == board["rows_common"]
    assert halves["candidates"] == board["candidates"]  # the overall board as without groups

    exported = list(
        csv.DictReader(io.StringIO(evalq_long_ok(env, "results", job_id, "--format", "csv").stdout))
    )
    assert [r["candidate"] for r in exported[:3]] == names
    lines = [json.loads(x) for x in evalq_long_ok(env, "results", job_id).stdout.splitlines()]
    assert {x["candidate"] for x in lines} == set(names)

    import evalq

    frame = evalq.Job(job_id, client).results()
    assert list(frame.columns[:2]) == ["id", "candidate"]
    assert frame.groupby("candidate")["score"].count().to_dict() == {
        "copy": prompts - 1,
        "exact": prompts,
        "sloppy": prompts,
    }
