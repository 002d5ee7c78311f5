"""Tokens and money, end to end: real Redis, real workers, the fake server over HTTP. Every job
counts billed tokens per role and model and prices them; a model with no price shows its tokens
and an unknown cost, never $0; a spend cap pauses the job, across workers, until resumed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from devtools.local import wait_for
from evalq.client.output.html.report import render_report
from evalq.core.errors import DatasetError, EvalqError
from evalq.core.pricing import DEFAULT_PRICES, PRICE_DATE, call_cost_nanos, usd
from tests.conftest import FakeGemini, RedisServer, worker_env
from tests.support.cli import evalq_stdout, run_evalq, scrape_metrics
from tests.support.datasets import one_question_row, png, write_rows, yes_no
from tests.support.stack import stack
from tests.support.stores import store_of

pytestmark = pytest.mark.integration


def submit_uncached(client: Any, data: Path, *, rubric_model: str) -> str:
    """A gecko-image job judged by 2.5 Flash with rubrics by `rubric_model`, nothing cached."""
    options = {"rubric_model": rubric_model}
    job = client.submit(
        "gecko-image", data, judge_model="gemini-2.5-flash", options=options, use_cache=False
    )
    return str(job.job_id)


def test_tokens_and_cost_per_role_and_model(client: Any, fake: FakeGemini, tmp_path: Path) -> None:
    """The rubric writer (2.5 Pro) and the validator (2.5 Flash) are counted and priced apart;
    each call is priced with its own tokens, and the calls counted are the requests made."""
    rows = [
        {"id": c, "prompt": f"a {c} square", "image": str(png(tmp_path / f"{c}.png", c))}
        for c in ("red", "blue")
    ]
    data = write_rows(tmp_path / "d.jsonl", rows)
    job = submit_uncached(client, data, rubric_model="gemini-2.5-pro")
    s = client.wait(job, timeout_s=120)
    assert s.status == "finished"
    by_model = {(u["role"], u["model"]): u for u in s.usage}
    assert set(by_model) == {("rubric", "gemini-2.5-pro"), ("validator", "gemini-2.5-flash")}
    rubric, validator = (
        by_model["rubric", "gemini-2.5-pro"],
        by_model["validator", "gemini-2.5-flash"],
    )
    assert rubric["thought"] > 0  # 2.5 Pro thinks (modest budget), billed as output
    assert validator["thought"] == 0  # flash validator: thinking off by default
    assert rubric["calls"] + validator["calls"] == fake.stats()["requests"] == s.judge_calls
    assert s.tokens_by_role["validator"]["prompt"] == validator["prompt"]
    assert s.tokens_by_model["gemini-2.5-pro"]["output"] == rubric["output"]
    # Under 200k prompt tokens and nothing cached, per-call prices add up like totals.
    for entry, model in ((rubric, "gemini-2.5-pro"), (validator, "gemini-2.5-flash")):
        price = DEFAULT_PRICES[model]
        expected = usd(call_cost_nanos(price, entry["prompt"], entry["output"], entry["thought"]))
        assert entry["cost_usd"] == pytest.approx(expected, rel=1e-6, abs=1e-9)
    assert s.cost_by_role["rubric"] == pytest.approx(rubric["cost_usd"])
    assert s.cost_usd == pytest.approx(rubric["cost_usd"] + validator["cost_usd"])
    assert s.cost_usd > 0 and s.prices_known and s.price_date == PRICE_DATE
    assert s.spent_usd == pytest.approx(s.cost_usd, abs=1e-9)
    # A rerun served from the call cache is free: no usage, cost 0.
    rerun = client.submit("gecko-image", data, options={"rubric_model": "gemini-2.5-pro"})
    again = client.wait(rerun.job_id, timeout_s=120)
    assert again.cache_hits > 0 and again.judge_calls == 0 and again.usage == []


def test_an_unknown_price_shows_tokens_and_never_zero(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    image = png(tmp_path / "a.png", "green")
    data = write_rows(
        tmp_path / "d.jsonl", [{"id": "r", "prompt": "a green circle", "image": str(image)}]
    )
    job = submit_uncached(client, data, rubric_model="gemini-unpriced-test")
    s = client.wait(job, timeout_s=120)
    assert s.status == "finished"
    assert s.tokens_by_role["rubric"]["prompt"] > 0  # counted, though not priced
    assert s.cost_by_role["rubric"] is None and s.cost_by_model["gemini-unpriced-test"] is None
    assert s.cost_by_role["validator"] is not None and s.cost_by_role["validator"] > 0
    assert s.cost_usd is None and not s.prices_known
    assert s.cost_note is not None and "gemini-unpriced-test" in s.cost_note
    env = worker_env(redis_server.url, fake.url, COLUMNS="400")
    status = evalq_stdout(env, "status", job)
    cost_line = next(line for line in status.splitlines() if "│ cost " in line)
    assert "unknown (rubric unknown · validator $0.0" in cost_line, cost_line
    assert "no price known for gemini-unpriced-test" in cost_line
    html = render_report(s, client.results(job))
    assert "price unknown" in html and "gemini-unpriced-test" in html
    text = scrape_metrics(env)
    labels = f'job_id="{job}",metric="gecko-image"'
    assert f'evalq_job_cost_unknown{{{labels},role="rubric"}} 1.0' in text
    assert f'evalq_job_cost_usd{{{labels},role="rubric"}}' not in text
    assert f'evalq_job_cost_usd{{{labels},role="validator"}}' in text
    tokens = [line for line in text.splitlines() if line.startswith("evalq_job_tokens{")]
    assert any(
        'role="rubric"' in line and 'model="gemini-unpriced-test"' in line for line in tokens
    ), tokens


def test_a_cap_on_a_model_without_a_price_is_refused(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    data = one_question_row(tmp_path)
    with pytest.raises(DatasetError, match="no price is known for gemini-unpriced-test"):
        client.submit("gecko-image", data, judge_model="gemini-unpriced-test", max_cost_usd=1.0)


def test_the_spend_cap_pauses_the_job_across_workers_and_resume_continues(
    tmp_path: Path,
) -> None:
    """Two worker processes share one spend: the job pauses once it reaches the cap, the rows
    already scored stay, and resume with a new cap finishes it without asking anything twice."""
    # A small output allowance keeps each call's reserved estimate (evalq.worker.judges.budget) near
    # its bill, so the cap pays for several calls before it pauses the job.
    with stack(tmp_path, workers=2, concurrency=4, EVALQ_MAX_OUTPUT_TOKENS="64") as s:
        client = s.client()
        image = png(tmp_path / "a.png", "yellow")
        # One question per row: every call that is made completes its row.
        rows = [
            {"id": f"r{i}", "prompt": "p", "image": str(image), "questions": [yes_no(f"Cap-{i}?")]}
            for i in range(90)
        ]
        data = write_rows(tmp_path / "d.jsonl", rows)
        cap = 0.002
        job = client.submit("gecko-image", data, max_cost_usd=cap).job_id
        assert client.wait(job, timeout_s=180).status == "paused"
        # The calls in flight at the pause land, and settle their reservations.
        wait_for(
            lambda: s.stats()["in_flight"] == 0 and store_of(client).reserved(job) == 0,
            60,
            "the calls in flight to be counted",
        )
        paused = client.summary(job)
        assert paused.status == "paused", paused
        assert paused.pause_reason is not None and "cost cap reached" in paused.pause_reason
        assert paused.max_cost_usd == pytest.approx(cap)
        made = s.stats()["requests"]
        assert 0 < made < 90  # it stopped calling
        # Each call reserved its estimate before it started (an estimate here bounds its bill),
        # so the 8 threads' calls in flight fit in the cap together; the job pauses once the
        # spend reaches it, past it by at most the one call let through alone at the end.
        per_call = max(u["cost_usd"] / u["calls"] for u in paused.usage)
        assert cap <= paused.spent_usd <= cap + per_call
        assert paused.cost_usd == pytest.approx(paused.spent_usd)
        # The rows whose call was made are scored (their callbacks run while paused) and stay.
        wait_for(lambda: len(client.results(job)) == s.stats()["requests"], 60, "scored rows")
        scored = {r.id: r.score for r in client.results(job)}
        assert scored and all(score is not None for score in scored.values())
        assert client.summary(job).status == "paused" and len(scored) < 90
        with pytest.raises(EvalqError, match="resume it with a larger cap"):
            client.resume(job)
        with pytest.raises(EvalqError, match="would pause it again at once"):
            client.resume(job, max_cost_usd=cap / 2)
        client.resume(job, max_cost_usd=1.0)
        done = client.wait(job, timeout_s=180)
        assert done.status == "finished" and done.rows_done == 90, done.pause_reason
        assert done.max_cost_usd == pytest.approx(1.0)
        after = {r.id: r.score for r in client.results(job)}
        assert {k: after[k] for k in scored} == scored
        assert s.stats()["requests"] == 90  # every question asked exactly once overall
        assert done.judge_calls == 90


def test_cli_max_cost_usd_on_run_and_resume(
    redis_server: RedisServer, fake: FakeGemini, tmp_path: Path, client: Any
) -> None:
    image = png(tmp_path / "a.png")
    rows = [
        {"id": f"r{i}", "prompt": "p", "image": str(image), "questions": [yes_no(f"Cli-{i}?")]}
        for i in range(12)
    ]
    data = write_rows(tmp_path / "d.jsonl", rows)
    env = worker_env(redis_server.url, fake.url)

    run = run_evalq(
        env, "run", "gecko-image", str(data), "--max-cost-usd", "0.0000001", "--wait", "--json"
    )
    assert run.returncode == 6, run.stderr  # paused (docs/concepts/jobs-rows-units.md: Exit codes)
    summary = json.loads(run.stdout)
    assert summary["status"] == "paused" and "cost cap reached" in summary["pause_reason"]
    job = summary["job_id"]
    said = run.stderr.strip().splitlines()[-1]
    assert said.startswith(f"job {job} is paused, ") and "cost cap reached" in said
    refused = run_evalq(env, "resume", job)
    assert refused.returncode == 2 and "--max-cost-usd" in refused.stderr
    resumed = run_evalq(env, "resume", job, "--max-cost-usd", "5", "--wait", "--json")
    assert resumed.returncode == 0, resumed.stderr
    final = json.loads(resumed.stdout)
    assert final["status"] == "finished" and final["max_cost_usd"] == 5.0
