"""`evalq compare` on pointwise, pairwise and groundedness jobs with real workers and the fake
Gemini server: rows pair by row on each metric's own value (a pointwise row's mean rating, a
pairwise row's win share of A, a groundedness row's grounded share), with a real p-value, where
Gecko's question pairing found nothing to pair."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evalq.examples.grounding import write_groundedness_example
from evalq.examples.ratings import write_pairwise_example
from tests.conftest import FakeGemini, RedisServer, worker_env
from tests.support.cli import evalq_long_ok, run_evalq
from tests.support.datasets import write_rows
from tests.support.rating_replies import rating

pytestmark = pytest.mark.integration

GOOD = {"PwCmpFive": 5, "PwCmpFour": 4, "PwCmpTwo": 2, "PwCmpThree": 3}


def script_ratings(fake: FakeGemini) -> None:
    fake.script([{"match": marker, "reply": rating(value)} for marker, value in GOOD.items()])


def summaries(strong: bool) -> list[dict[str, str]]:
    """Eight rows: the strong model's summaries rate 5 or 4, the weak one's 2 or 3."""
    markers = ("PwCmpFive", "PwCmpFour") if strong else ("PwCmpTwo", "PwCmpThree")
    return [
        {
            "id": f"s{i}",
            "prompt": f"Summarise article {i}.",
            "response": f"{markers[i % 2]} summary of article {i}.",
            "category": "news" if i < 4 else "science",
        }
        for i in range(8)
    ]


def mean_ratings(client: Any, job: str, candidate: str | None = None) -> dict[str, float]:
    return {
        r.id: r.details["mean_rating"]
        for r in client.results(job)
        if candidate is None or r.candidate == candidate
    }


def check_pair(pair: dict[str, Any], a: dict[str, float], b: dict[str, float]) -> None:
    diffs = [a[i] - b[i] for i in a]
    assert pair["counts"]["paired"] == len(diffs) == 8
    assert pair["counts"]["no_common_questions"] == 0
    overall = pair["overall"]
    assert overall["mean_diff"] == pytest.approx(float(np.mean(diffs)))  # rating points
    assert overall["mean_diff"] == pytest.approx(2.0)
    assert overall["p_permutation"] == pytest.approx(2 / 2**8)  # every row won by A
    assert overall["p_method"] == "exact" and overall["ci95"][0] > 0


def test_two_pointwise_jobs_compare_on_the_mean_rating(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    script_ratings(fake)
    options = {"template": "fluency"}
    strong = client.submit(
        "pointwise",
        write_rows(tmp_path / "strong.jsonl", summaries(True)),
        judge_model="cmp-pw-judge",
        options=options,
        name="strong-summaries",
    ).job_id
    weak = client.submit(
        "pointwise",
        write_rows(tmp_path / "weak.jsonl", summaries(False)),
        judge_model="cmp-pw-judge",
        options=options,
    ).job_id
    client.wait(strong, timeout_s=120)
    client.wait(weak, timeout_s=120)
    env = worker_env(redis_server.url, fake.url, COLUMNS="80")
    data = json.loads(
        evalq_long_ok(env, "compare", strong, weak, "--json", "--group-by", "category").stdout
    )
    assert data["value"]["label"] == "mean rating (1-5)"
    assert [s["label"] for s in data["sides"]] == ["strong-summaries", weak]  # --name, else id
    (pair,) = data["pairs"]
    check_pair(pair, mean_ratings(client, strong), mean_ratings(client, weak))
    assert [g["value"] for g in pair["groups"]] == ["news", "science"]
    assert all(g["rows"] == 4 and g["p_holm_groups"] is not None for g in pair["groups"])

    table = evalq_long_ok(env, "compare", strong, weak).stdout
    assert "…" not in table and "mean rating (1-5)" in table
    assert "8 rows paired" in table and "no question scored by both" not in table
    failing = run_evalq(env, "compare", strong, weak, "--fail-under", "2.5")
    assert failing.returncode == 1
    assert "below --fail-under: strong-summaries vs" in failing.stderr
    evalq_long_ok(env, "compare", strong, weak, "--fail-under", "1.5")  # exits 0

    import evalq

    result = evalq.compare(strong, weak, client=client, group_by="category")
    assert result.overall.loc[0, "value"] == "mean rating (1-5)"
    assert result.overall.loc[0, "mean_diff"] == pytest.approx(2.0)
    assert result.per_group is not None and len(result.per_group) == 2


def test_the_candidates_of_one_pointwise_job_compare(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    script_ratings(fake)
    rows = [
        {**s, "baseline_model_response": w["response"]}
        for s, w in zip(summaries(True), summaries(False), strict=True)
    ]
    job = client.submit(
        "pointwise",
        write_rows(tmp_path / "both.jsonl", rows),
        judge_model="cmp-pw-cand-judge",
        options={"template": "fluency", "candidates": ["response", "baseline_model_response"]},
    ).job_id
    client.wait(job, timeout_s=120)
    env = worker_env(redis_server.url, fake.url, COLUMNS="80")
    data = json.loads(evalq_long_ok(env, "compare", job, "--json").stdout)
    assert [s["label"] for s in data["sides"]] == ["response", "baseline_model_response"]
    assert data["sides"][0]["cost_shared_with"] == ["baseline_model_response"]
    assert data["sides"][0]["cost_usd"] == data["sides"][1]["cost_usd"]  # the job's, shared
    (pair,) = data["pairs"]
    check_pair(
        pair,
        mean_ratings(client, job, "response"),
        mean_ratings(client, job, "baseline_model_response"),
    )
    board = evalq_long_ok(env, "leaderboard", job).stdout
    assert "…" not in board and "shared with" in " ".join(board.split())


def test_pairwise_jobs_compare_on_the_win_share_of_a(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    dataset = write_pairwise_example(tmp_path / "example")
    lines = [json.loads(line) for line in dataset.read_text().splitlines()]
    swapped = [{**r, "response_a": r["response_b"], "response_b": r["response_a"]} for r in lines]
    flipped = write_rows(tmp_path / "example" / "swapped.jsonl", swapped)
    first = client.submit("pairwise", dataset, judge_model="cmp-pairwise-judge").job_id
    second = client.submit("pairwise", flipped, judge_model="cmp-pairwise-judge").job_id
    client.wait(first, timeout_s=120)
    client.wait(second, timeout_s=120)
    a = {r.id: r.score for r in client.results(first)}
    b = {r.id: r.score for r in client.results(second)}
    assert all(v is not None for v in [*a.values(), *b.values()])
    env = worker_env(redis_server.url, fake.url, COLUMNS="80")
    data = json.loads(evalq_long_ok(env, "compare", first, second, "--json").stdout)
    assert data["value"]["label"] == "win share of response A (0-1)"
    (pair,) = data["pairs"]
    assert pair["counts"]["paired"] == len(a)
    diffs = [(a[i] or 0.0) - (b[i] or 0.0) for i in a]
    assert pair["overall"]["mean_diff"] == pytest.approx(float(np.mean(diffs)))
    assert pair["overall"]["p_permutation"] is not None
    assert pair["overall"]["wins"] == sum(d > 0 for d in diffs) > 0


def test_groundedness_jobs_compare_on_the_grounded_share(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    dataset = write_groundedness_example(tmp_path / "example")
    lines = [json.loads(line) for line in dataset.read_text().splitlines()]
    off_topic = "Purple elephants sing opera on the moon every Tuesday."
    given = [{**r, "response": r.get("response", off_topic)} for r in lines]
    other = write_rows(tmp_path / "example" / "given.jsonl", given)
    generated = client.submit(
        "groundedness",
        dataset,
        judge_model="cmp-ground-judge",
        options={"candidate_model": "cmp-ground-model"},
    ).job_id
    written = client.submit("groundedness", other, judge_model="cmp-ground-judge").job_id
    client.wait(generated, timeout_s=120)
    client.wait(written, timeout_s=120)
    a = {r.id: r.score for r in client.results(generated)}
    b = {r.id: r.score for r in client.results(written)}
    env = worker_env(redis_server.url, fake.url, COLUMNS="80")
    data = json.loads(evalq_long_ok(env, "compare", generated, written, "--json").stdout)
    assert data["value"]["label"] == "grounded share (0-1)"
    assert data["value"]["paired_by"] == "row"
    assert [s["label"] for s in data["sides"]] == ["cmp-ground-model", written]  # its model
    (pair,) = data["pairs"]
    both = [i for i in a if a[i] is not None and b[i] is not None]
    assert pair["counts"]["paired"] == len(both) == len(lines)
    diffs = [(a[i] or 0.0) - (b[i] or 0.0) for i in both]
    assert pair["overall"]["mean_diff"] == pytest.approx(float(np.mean(diffs)))
    assert pair["overall"]["mean_diff"] > 0  # the generated answers are grounded
    assert pair["overall"]["p_permutation"] is not None
