"""A user's own columns on the real stack: Vertex's groundedness columns as they are (an unknown
column warned of once a run, never one given to --group-by), a promptfoo CSV mapped, --group-by's
figures in status, a --candidates headline per candidate, every metric's and extra column exported."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import evalq
from tests.conftest import FakeGemini, RedisServer, worker_env
from tests.support.cli import evalq_ok, run_evalq
from tests.support.datasets import write_rows

pytestmark = pytest.mark.integration

CONTEXT = "Orders ship within one day. Returns are accepted for 30 days."


def vertex_groundedness_rows() -> list[dict[str, str]]:
    """Vertex's groundedness shape (prompt, response, context) with a category of our own."""
    return [
        {
            "id": f"v{i}",
            "prompt": f"When will order {i} ship?",
            "response": "Orders ship within one day.",
            "context": CONTEXT,
            "category": "shipping" if i % 2 else "returns",
        }
        for i in range(6)
    ]


def test_vertex_groundedness_grouped_by_category_through_the_cli(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    env = worker_env(redis_server.url, fake.url)
    data = write_rows(tmp_path / "vertex.jsonl", vertex_groundedness_rows())
    ran = evalq_ok(
        env, "run", "groundedness", str(data), "--group-by", "category", "--wait", "--json"
    )
    summary = json.loads(ran.stdout)
    assert summary["status"] == "finished" and summary["rows_failed"] == 0
    assert "kept as extra" not in ran.stderr  # category is read: by --group-by
    said = evalq_ok(env, "run", "groundedness", str(data), "--wait")  # text: warned once
    assert (said.stdout + said.stderr).count("unknown column(s) 'category'") == 1
    groups = {g["value"]: g for g in summary["groups"]}
    assert set(groups) == {"shipping", "returns"}
    assert all(g["rows"] == 3 and g["ci95"] is not None for g in groups.values())
    job = summary["job_id"]

    text = evalq_ok(env, "status", job).stdout
    assert "category=shipping" in text and "category=returns" in text

    # A column no row has: the error names it and the columns there are.
    bad = run_evalq(env, "status", job, "--group-by", "tier")
    assert bad.returncode != 0 and "'tier'" in bad.stderr and "category" in bad.stderr

    table = list(
        csv.DictReader(io.StringIO(evalq_ok(env, "results", job, "--format", "csv").stdout))
    )
    assert {r["category"] for r in table} == {"shipping", "returns"}
    assert all(r["grounded"] in ("0", "1") and r["labels"].startswith("[1] ") for r in table)


def test_a_promptfoo_csv_with_mapped_columns_through_the_api(
    settings: Any, workers: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    frame = pd.DataFrame(
        {
            "customer_message": ["Where is my order?", "Can I return it?"],
            "reply": ["Orders ship within one day.", "Returns are accepted for 30 days."],
            "context": [CONTEXT, CONTEXT],
            "tier": ["gold", "free"],
        }
    )
    job = evalq.evaluate(
        frame,
        "groundedness",
        column_map={"query": "customer_message", "response": "reply"},
        base_dir=tmp_path,
        settings=settings,
    )
    summary = job.wait(timeout_s=120)
    assert summary["status"] == "finished" and summary["rows_failed"] == 0
    assert summary["column_map"] == {"query": "customer_message", "response": "reply"}
    grouped = job.summary(group_by=["tier"])
    assert {g["value"] for g in grouped["groups"]} == {"gold", "free"}
    results = job.results()
    assert list(results["tier"]) == ["gold", "free"]
    assert list(results["response"]) == list(frame["reply"])
    assert {"grounded", "eligible", "labels"} <= set(results.columns)


def test_a_candidates_job_leads_with_each_candidate(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    env = worker_env(redis_server.url, fake.url)
    rows = [
        {
            "id": f"s{i}",
            "prompt": "Summarise: bees dance to show where flowers are.",
            "response": "Bees dance to point to flowers.",
            "baseline_model_response": "Cats sleep.",
            "category": "bees",
        }
        for i in range(4)
    ]
    data = write_rows(tmp_path / "byod.jsonl", rows)
    args = [
        "--candidates",
        "response,baseline_model_response",
        "--template",
        "summarization_quality",
    ]
    ran = evalq_ok(env, "run", "pointwise", str(data), *args, "--wait", "--json")
    summary = json.loads(ran.stdout)
    assert list(summary["candidates"]) == ["response", "baseline_model_response"]
    assert summary["mean_score_scope"] == "pooled over 2 candidates"
    job = summary["job_id"]

    text = evalq_ok(env, "status", job).stdout
    first = text.index("candidate response")
    assert first < text.index("candidate baseline_model_response")
    assert first < text.index("mean score (pooled over 2 candidates)")

    grouped = json.loads(evalq_ok(env, "status", job, "--group-by", "category", "--json").stdout)
    assert [(g["value"], g["candidate"]) for g in grouped["groups"]] == [
        ("bees", "response"),
        ("bees", "baseline_model_response"),
    ]

    table = list(
        csv.DictReader(io.StringIO(evalq_ok(env, "results", job, "--format", "csv").stdout))
    )
    assert len(table) == 8 and all(r["category"] == "bees" for r in table)
    assert all(1 <= float(r["rating"]) <= 5 and r["explanation"] for r in table)
