"""Batch mode end to end: real Redis, real worker processes, the fake server's Batch API over
HTTP. Nothing here waits a fixed time or asserts on how long anything took.

The tests share one stack: each waits its jobs out, asks questions no other test asks (a tag
per dataset, so no reply comes from another test's call cache) and starts with the fake's
script, batch delay and counters cleared (`s`). Only the test that kills workers mid-batch
runs them on a stack of its own."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from devtools.local import EVALQ, wait_for
from tests.support import batches
from tests.support.stack import Stack, stack
from tests.support.stores import store_of
from tests.support.summaries import comparable

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", name="shared")
def batch_stack_for_the_module(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with stack(tmp_path_factory.mktemp("batch-mode"), **batches.FAST_POLLS) as s:
        yield s


@pytest.fixture(name="s")
def batch_stack_for_this_test(shared: Stack) -> Iterator[Stack]:
    """The shared stack as started: no rule scripted, batches not held, counters at zero. An
    earlier test's jobs have all ended, so what the fake counts from here is this test's."""
    shared.post("/script", [])
    shared.post("/batch-delay", {"delay_s": 0})
    shared.reset_stats()
    yield shared
    shared.post("/script", [])
    shared.post("/batch-delay", {"delay_s": 0})


def test_gecko_image_batch_scores_equal_online_and_cost_half(s: Stack, tmp_path: Path) -> None:
    from evalq.examples.gecko import write_gecko_image_example

    dataset = write_gecko_image_example(tmp_path / "example")
    client = s.client()
    # Two names of one model (priced alike), so the second job shares no rubric with the
    # first (rubrics are cached per judge model) and both pay for every call.
    online = client.submit("gecko-image", dataset, judge_model="gemini-2.5-flash")
    online_summary = client.wait(online.job_id, timeout_s=300)
    s.reset_stats()
    batch = client.submit("gecko-image", dataset, judge_model="gemini-2.5-flash-001", mode="batch")
    batch_summary = client.wait(batch.job_id, timeout_s=300)
    stats = s.stats()
    assert batch_summary.status == "finished"
    assert batches.row_scores(client, batch.job_id) == batches.row_scores(client, online.job_id)
    assert comparable(batch_summary, digits=None) == comparable(online_summary, digits=None)
    # Two stages: every rubric in one round, then every validator question in the next.
    assert stats["requests"] == 0  # not one generateContent call
    assert stats["batches"]["created"] >= 2
    records = client.batches(batch.job_id)
    assert {r.round for r in records} == {1, 2}
    assert all(r.ingested and r.state == "SUCCEEDED" for r in records)
    # Online, identical calls running at once may each miss the call cache; a batch asks
    # each distinct request once. Every call is accounted either way.
    asked = online_summary.judge_calls + online_summary.cache_hits
    assert batch_summary.judge_calls + batch_summary.cache_hits == asked
    assert batch_summary.judge_calls == sum(r.requests for r in records)
    assert batch_summary.cost_usd == pytest.approx(
        batches.online_cost_usd(batch_summary) / 2, rel=1e-6
    )
    assert online_summary.cost_usd is not None


def test_groundedness_batch_scores_equal_online_with_its_candidate_stage(
    s: Stack, tmp_path: Path
) -> None:
    from evalq.examples.grounding import write_groundedness_example

    dataset = write_groundedness_example(tmp_path / "example")
    client = s.client()
    # No rubrics here: with the call cache off, the second job pays for every call too.
    online = client.submit("groundedness", dataset, use_cache=False)
    online_summary = client.wait(online.job_id, timeout_s=300)
    s.reset_stats()
    batch = client.submit("groundedness", dataset, use_cache=False, mode="batch")
    batch_summary = client.wait(batch.job_id, timeout_s=300)
    assert batch_summary.status == "finished"
    assert batches.row_scores(client, batch.job_id) == batches.row_scores(client, online.job_id)
    assert comparable(batch_summary, digits=None) == comparable(online_summary, digits=None)
    assert s.stats()["requests"] == 0
    # The candidate's response is written in one round, judged in a later one.
    rounds = {r.round for r in client.batches(batch.job_id)}
    assert len(rounds) >= 2
    assert batch_summary.candidate_calls == online_summary.candidate_calls > 0


@dataclass
class Calm:
    """A 30-row batch job run to its end with nothing killed: its dataset, summary and the
    batches it created, what the same job must come to through crashes."""

    dataset: Path
    summary: Any
    created: int


@pytest.fixture(scope="module")
def calm(shared: Stack, tmp_path_factory: pytest.TempPathFactory) -> Calm:
    """Run once on the shared stack for both ways of re-attaching; its questions are its own,
    so every one of them is a batch request, as on the fresh stacks the crashed runs get."""
    dataset = batches.shapes(tmp_path_factory.mktemp("calm"), 30, tag="calm")
    client = shared.client()
    job_id = client.submit("gecko-image", dataset, mode="batch").job_id
    summary = client.wait(job_id, timeout_s=300)
    return Calm(dataset, summary, len(client.batches(job_id)))


@pytest.mark.parametrize("reattach_by", ["watchdog", "resume"])
def test_sigkilled_workers_while_running_reattach_without_a_new_batch(
    calm: Calm, tmp_path: Path, reattach_by: str
) -> None:
    """Workers (and the producer: a client process that only submits) die while a batch runs.
    The watchdog on its own, or `evalq resume` with the watchdog asleep, re-attaches. The
    workers are killed, so they are this test's own."""
    dataset = calm.dataset
    watchdog_s = "0.3" if reattach_by == "watchdog" else "3600"
    env = {
        **batches.FAST_POLLS,
        "EVALQ_STALL_TIMEOUT_S": "1",
        "EVALQ_WATCHDOG_INTERVAL_S": watchdog_s,
    }
    with stack(tmp_path / "stormy", workers=2, **env) as s:
        client = s.client()
        s.post("/batch-delay", {"running_s": 3600})  # batches stay RUNNING until released
        producer = subprocess.Popen(
            [*EVALQ, "run", "gecko-image", str(dataset), "--mode", "batch", "--wait", "--json"],
            env=s.env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(lambda: bool(store_of(client).list_jobs(1)), 120, "the producer's job")
        job_id = store_of(client).list_jobs(1)[0]
        wait_for(
            lambda: any(r.state == "RUNNING" for r in client.batches(job_id)),
            120,
            "a batch seen RUNNING",
        )
        for proc in [producer, *s.pool.procs]:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        s.pool.procs.clear()
        created = s.stats()["batches"]["created"]
        s.pool.start(concurrency=4, name="after-crash")
        if reattach_by == "resume":
            from tests.support.cli import evalq_stdout

            evalq_stdout(s.env(), "resume", job_id)
        s.post("/batch-delay", {"delay_s": 0})
        summary = client.wait(job_id, timeout_s=300)
        stats = s.stats()
        assert stats["batches"]["created"] == created == calm.created
        assert summary.rows_done == summary.rows_total == 30
        assert comparable(summary, digits=None) == comparable(calm.summary, digits=None)
        assert len(list(client.results(job_id))) == 30


def test_an_expired_batch_is_resubmitted_once_and_the_job_completes(
    s: Stack, tmp_path: Path
) -> None:
    dataset = batches.shapes(tmp_path / "data", 6, tag="resubmitted")
    client = s.client()
    s.post("/script", [{"match": "check 3", "batch_state": "EXPIRED", "times": 1}])
    job_id = client.submit("gecko-image", dataset, mode="batch").job_id
    summary = client.wait(job_id, timeout_s=300)
    stats = s.stats()["batches"]
    assert summary.status == "finished" and summary.rows_scored == 6
    assert stats["ended"] == {"EXPIRED": 1, "SUCCEEDED": 1}
    assert stats["created"] == 2
    states = [r.state for r in client.batches(job_id)]
    assert states == ["EXPIRED", "SUCCEEDED"]
    assert summary.batch is not None and summary.batch["resubmitted"] == 1


def test_an_expired_batch_goes_online_with_on_expiry_online(s: Stack, tmp_path: Path) -> None:
    dataset = batches.shapes(tmp_path / "data", 4, tag="fallback")
    client = s.client()
    s.post("/script", [{"match": "check", "batch_state": "EXPIRED"}])
    job_id = client.submit("gecko-image", dataset, mode="batch", on_expiry="online").job_id
    summary = client.wait(job_id, timeout_s=300)
    assert summary.status == "finished" and summary.rows_scored == 4
    assert s.stats()["requests"] == 12  # every question asked online instead
    assert summary.batch is not None and summary.batch["online_fallback"] == 1


def test_a_failed_request_is_unscored_with_its_reason_and_a_retryable_one_goes_again(
    s: Stack, tmp_path: Path
) -> None:
    dataset = batches.shapes(tmp_path / "data", 3, tag="failures")
    client = s.client()
    s.post(
        "/script",
        [
            {"match": "star\\? \\(check 1\\)", "status": 400},
            {"match": "star\\? \\(check 2\\)", "status": 503, "times": 1},
        ],
    )
    job_id = client.submit("gecko-image", dataset, mode="batch").job_id
    summary = client.wait(job_id, timeout_s=300)
    rows = {r.id: r for r in client.results(job_id)}
    batches.assert_refused_unscored_and_transient_retried(rows, summary)
    assert s.stats()["batches"]["created"] == 2


LARGE_ROWS = 400


def test_a_large_job_goes_through_the_file_path_in_one_batch(s: Stack, tmp_path: Path) -> None:
    """1,200 requests written to one request file and their results read back line by line
    in one batch; the guide's scale figures (2,000 rows) are this test with LARGE_ROWS = 2000,
    kept smaller here for the suite's time."""
    dataset = batches.shapes(tmp_path / "data", LARGE_ROWS, tag="large")
    client = s.client()
    job_id = client.submit("gecko-image", dataset, mode="batch").job_id
    summary = client.wait(job_id, timeout_s=1200)
    records = client.batches(job_id)
    assert summary.status == "finished" and summary.rows_done == LARGE_ROWS
    assert [r.source for r in records] == ["file"]
    assert records[0].requests == records[0].succeeded == 3 * LARGE_ROWS
    assert s.stats()["requests"] == 0
    peak, before = records[0].ingest_peak_rss_kb, records[0].ingest_start_peak_rss_kb
    assert peak is not None and before is not None
    print(
        f"\n{LARGE_ROWS}-row file batch ({3 * LARGE_ROWS} requests): the ingesting worker "
        f"process's peak RSS {peak / 1024:.0f} MiB after ingesting, {before / 1024:.0f} MiB "
        "before it began"
    )


def test_cli_batch_run_status_dry_run_metrics_and_vertex_without_a_prefix(
    s: Stack, tmp_path: Path
) -> None:
    from tests.support.cli import evalq_stdout, run_evalq, scrape_metrics

    dataset = batches.shapes(tmp_path / "data", 3, tag="cli")
    env = s.env()
    plan = json.loads(evalq_stdout(env, "run", "gecko-image", str(dataset), "--dry-run", "--json"))
    assert plan["cost_usd_batch"] == pytest.approx(plan["cost_usd"] / 2, rel=1e-6)
    shown = evalq_stdout(env, "run", "gecko-image", str(dataset), "--dry-run")
    assert "--mode batch" in shown
    done = json.loads(
        evalq_stdout(env, "run", "gecko-image", str(dataset), "--mode", "batch", "--wait", "--json")
    )
    assert done["status"] == "finished" and done["mode"] == "batch"
    assert done["batch"]["on_expiry"] == "resubmit"
    status = json.loads(evalq_stdout(env, "status", done["job_id"], "--json"))
    assert [b["state"] for b in status["batches"]] == ["SUCCEEDED"]
    assert status["batches"][0]["requests"] == 9
    table = evalq_stdout(env, "status", done["job_id"])
    assert "batches" in table and "INGESTED" in table
    text = scrape_metrics(env)
    labels = f'job_id="{done["job_id"]}",metric="gecko-image"'
    assert f'evalq_job_batches{{{labels},state="INGESTED"}} 1.0' in text
    # A rerun finds every call in the call cache: it finishes without sending a batch.
    created = s.stats()["batches"]["created"]
    again = json.loads(
        evalq_stdout(env, "run", "gecko-image", str(dataset), "--mode", "batch", "--wait", "--json")
    )
    assert again["status"] == "finished" and again["mean_score"] == done["mean_score"]
    assert again["cache_hits"] == 9 and again["judge_calls"] == 0
    assert s.stats()["batches"]["created"] == created
    # On Vertex AI batch mode needs a Cloud Storage prefix: one line naming the setting.
    vertex = {
        **env,
        "GOOGLE_GENAI_USE_VERTEXAI": "true",
        "GOOGLE_CLOUD_PROJECT": "p",
        "GOOGLE_CLOUD_LOCATION": "us-central1",
    }
    refused = run_evalq(vertex, "run", "gecko-image", str(dataset), "--mode", "batch")
    assert refused.returncode != 0
    assert "EVALQ_VERTEX_BATCH_PREFIX" in refused.stderr


def test_cancelling_a_job_cancels_its_batches(s: Stack, tmp_path: Path) -> None:
    dataset = batches.shapes(tmp_path / "data", 3, tag="cancelled")
    client = s.client()
    s.post("/batch-delay", {"delay_s": 3600})
    job_id = client.submit("gecko-image", dataset, mode="batch").job_id
    wait_for(lambda: any(r.name for r in client.batches(job_id)), 120, "a batch created")
    client.cancel(job_id)
    (record,) = client.batches(job_id)
    assert record.state == "CANCELLED" and record.cancelled_by_us
    assert s.stats()["batches"]["ended"] == {"CANCELLED": 1}
    assert client.summary(job_id).status == "cancelled"
