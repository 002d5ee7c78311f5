"""`evalq run --dry-run` end to end: real Redis, the fake server over HTTP, real workers for the
runs it is compared with. A dry run checks every row as a run would, plans every call, and makes
no generate call and stores no job; what it plans is what a run then does."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeGemini, RedisServer, worker_env
from tests.support.cli import run_evalq
from tests.support.datasets import png, write_rows, yes_no
from tests.support.scratch import job_keys
from tests.support.stores import store_of

pytestmark = pytest.mark.integration


def dry_run_rows(tmp_path: Path, tag: str) -> Path:
    good = png(tmp_path / "a.png", "red")
    broken = tmp_path / "broken.png"
    broken.write_bytes(good.read_bytes()[:40])  # a PNG signature and little else
    rows = [
        {
            "id": "two",
            "prompt": "p",
            "image": str(good),
            "questions": [yes_no(f"{tag}-1?"), yes_no(f"{tag}-2?")],
        },
        {
            "id": "three",
            "prompt": "p",
            "image": str(good),
            "questions": [yes_no(f"{tag}-3{i}?") for i in range(3)],
        },
        {"id": "no-image", "prompt": "a red circle"},
        {"id": "broken", "prompt": "p", "image": str(broken), "questions": [yes_no(f"{tag}-4?")]},
    ]
    return write_rows(tmp_path / "d.jsonl", rows)


def test_dry_run_plans_what_the_run_does_without_calling_or_storing(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    data = dry_run_rows(tmp_path, "Dp")
    before = job_keys(redis_server.url)
    judges = ["gemini-2.5-flash", "gemini-2.5-flash-lite"]
    plan = client.plan("gecko-image", data, judge_models=judges, count_tokens=True)
    # Nothing was asked, stored or enqueued; only count_tokens requests were made.
    stats = fake.stats()
    assert stats["requests"] == 0 and stats["count_tokens"] > 0
    assert job_keys(redis_server.url) == before
    # Bad rows are reported as a run reports them: the missing field at load, the image that
    # does not decode when its media is checked.
    assert plan.rows_total == 4 and plan.rows_planned == 2 and plan.rows_rejected == 2
    errors = {row.id: row.error for row in plan.rejected}
    assert "'image'" in errors["no-image"] and "missing" in errors["no-image"]
    assert "broken.png" in errors["broken"] and "does not decode" in errors["broken"]
    assert plan.counts["questions_expected"] == 5 and plan.counts["rubrics_given"] == 2
    calls = {(c.role, c.model): c for c in plan.calls}
    assert set(calls) == {("validator", m) for m in judges}
    assert all(c.calls == 5 for c in calls.values())  # every question, for each judge
    assert plan.calls_total == 10 and plan.cost_usd is not None and plan.cost_usd > 0
    assert plan.token_method.startswith("count_tokens API")

    # The run makes the calls the plan named, and its prompt tokens are the ones counted.
    job = client.submit("gecko-image", data, judge_models=judges).job_id
    s = client.wait(job, timeout_s=120)
    assert s.judge_calls == fake.stats()["requests"] == plan.calls_total
    assert s.rows_failed == plan.rows_rejected
    for entry in s.usage:
        planned = calls[entry["role"], entry["model"]]
        assert entry["calls"] == planned.calls
        assert entry["prompt"] == planned.prompt_tokens
        assert entry["thought"] == planned.thought_tokens == 0  # validators: thinking off

    # Planned again: every reply is in the call cache, so nothing would be paid for.
    fake.reset()
    again = client.plan("gecko-image", data, judge_models=judges)
    assert again.calls_total == 0 and again.cost_usd == 0
    assert again.counts["calls served from the call cache"] == 10
    assert fake.stats()["requests"] == 0


def test_dry_run_counts_rubrics_to_write_minus_the_cached_ones(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    image = png(tmp_path / "a.png", "blue")
    rows = [
        {"id": "a", "prompt": "a blue square next to a small tree", "image": str(image)},
        {"id": "b", "prompt": "a blue square next to a small tree", "image": str(image)},
        {"id": "c", "prompt": "two blue circles", "image": str(image)},
    ]
    data = write_rows(tmp_path / "d.jsonl", rows)
    first = client.plan("gecko-image", data, use_cache=False)
    # One rubric per distinct prompt; its questions are an estimate until it is written.
    assert first.counts["rubrics_to_write"] == 2 and first.counts["rubrics_shared"] == 1
    assert first.counts["questions_estimated"] == first.counts["questions_expected"] > 0
    assert {c.role for c in first.calls} == {"rubric", "validator"}
    rubric = next(c for c in first.calls if c.role == "rubric")
    assert rubric.calls == 2 and rubric.thought_tokens == 2 * 1024  # the modest budget
    assert fake.stats()["requests"] == 0
    # Write the rubric of one prompt, then plan again: it is read from the cache, exactly.
    only_c = write_rows(tmp_path / "c.jsonl", [rows[2]])
    client.wait(client.submit("gecko-image", only_c, use_cache=True).job_id, timeout_s=120)
    real = client.results(store_of(client).list_jobs(1)[0])[0]
    fake.reset()
    second = client.plan("gecko-image", data, use_cache=True)
    assert second.counts["rubrics_cached"] == 1 and second.counts["rubrics_to_write"] == 1
    assert second.counts["calls served from the call cache"] == len(real.questions)
    assert fake.stats()["requests"] == 0


def test_cli_dry_run_prints_one_table_or_json_and_runs_nothing(
    redis_server: RedisServer, fake: FakeGemini, tmp_path: Path
) -> None:
    data = dry_run_rows(tmp_path, "Dc")
    env = worker_env(
        redis_server.url,
        fake.url,
        COLUMNS="300",
        EVALQ_RATE_LIMITS=json.dumps({"gemini-2.5-flash": {"rpm": 60, "tpm": 1000000}}),
    )
    before = job_keys(redis_server.url)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run_evalq(env, "run", "gecko-image", str(data), "--dry-run", *args)

    as_json = cli("--json")
    assert as_json.returncode == 0, as_json.stderr
    plan = json.loads(as_json.stdout)
    assert plan["dry_run"] is True and plan["calls_total"] == 5 and plan["rows_rejected"] == 2
    assert plan["time_s"] == pytest.approx(5.0)  # 5 calls at 60 requests per minute
    assert plan["token_method"] == "estimate, 4 characters per token"
    table = cli()
    assert table.returncode == 0, table.stderr
    assert "nothing enqueued, no model called" in table.stdout
    assert "validator · gemini-2.5-flash" in table.stdout and "line 4" in table.stdout
    counted = cli("--count-tokens", "--json")
    assert (
        counted.returncode == 0 and "count_tokens API" in json.loads(counted.stdout)["token_method"]
    )
    assert fake.stats()["requests"] == 0
    assert job_keys(redis_server.url) == before
    alone = run_evalq(env, "run", "gecko-image", str(data), "--count-tokens")
    assert alone.returncode != 0 and "--dry-run" in alone.stderr


def test_dry_run_refuses_what_submit_refuses(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    from evalq.core.errors import DatasetError

    data = dry_run_rows(tmp_path, "Dr")
    before = job_keys(redis_server.url)
    with pytest.raises(DatasetError, match=r"gemini-2\.5-pro takes .*128\.\.32768"):
        client.plan("gecko-image", data, judge_model="gemini-2.5-pro", thinking={"validator": 0})
    with pytest.raises(DatasetError, match="no price is known for gemini-unpriced"):
        client.plan("gecko-image", data, judge_model="gemini-unpriced", max_cost_usd=1.0)
    capped = client.plan("gecko-image", data, max_cost_usd=1e-9)
    assert any("the job would pause before it finishes" in note for note in capped.notes)
    assert fake.stats()["requests"] == 0 and job_keys(redis_server.url) == before


def test_evaluate_dry_run_returns_the_plan(settings: Any, fake: FakeGemini, tmp_path: Path) -> None:
    import pandas as pd

    import evalq

    frame = pd.DataFrame(
        [
            {"prompt": "p", "response_a": "Paris.", "response_b": "Lyon.", "id": "r1"},
            {"prompt": "q", "response_a": "Yes.", "response_b": "No.", "id": "r2"},
        ]
    )
    plan = evalq.evaluate(
        frame,
        "pairwise",
        judge_models=["gemini-2.5-flash", "gemini-2.5-pro"],
        options={"samples": 3},
        settings=settings,
        base_dir=tmp_path,
        dry_run=True,
    )
    # 2 rows x 2 judges x 3 samples x both orders
    assert plan.calls_total == 24
    assert plan.counts["comparisons (judge x sample x pair x order)"] == 24
    pro = next(c for c in plan.calls if c.model == "gemini-2.5-pro")
    assert pro.thought_tokens == 12 * 128  # 2.5 Pro can't switch thinking off: its minimum
    assert fake.stats()["requests"] == 0
