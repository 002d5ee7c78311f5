"""Batch mode on Vertex AI, end to end on real processes: Redis, a Cloud Storage emulator
(gcp-storage-emulator, driven by the real google-cloud-storage client), the fake server's
batchPredictionJobs routes, and evalq's workers with google-genai in Vertex mode. One stack is
shared by the module's tests (each test its own jobs, counted by differences); nothing waits a
fixed time or asserts on how long anything took."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest
from google.cloud import storage

from devtools.local import GcsEmulator, wait_for
from tests.support.batches import (
    FAST_POLLS,
    assert_refused_unscored_and_transient_retried,
    online_cost_usd,
    row_scores,
    shapes,
)
from tests.support.cli import evalq_stdout, one_line_refusal, run_evalq
from tests.support.stack import Stack, stack
from tests.support.stores import store_of
from tests.support.summaries import comparable
from tests.support.vertex import VERTEX_ENV

pytestmark = pytest.mark.integration
BUCKET = "evalq-batches"
PREFIX = f"gs://{BUCKET}/runs"
VERTEX = VERTEX_ENV


@pytest.fixture(scope="module")
def vertex_stack(
    gcs_emulator: GcsEmulator, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    env = {
        **VERTEX,
        **FAST_POLLS,
        "STORAGE_EMULATOR_HOST": gcs_emulator.url,
        "EVALQ_VERTEX_BATCH_PREFIX": PREFIX,
        "EVALQ_STALL_TIMEOUT_S": "1",
        "EVALQ_WATCHDOG_INTERVAL_S": "3600",
    }
    folder = tmp_path_factory.mktemp("vertex-stack")
    with stack(folder, fake_env={"STORAGE_EMULATOR_HOST": gcs_emulator.url}, **env) as s:
        yield s


@pytest.fixture
def fresh(vertex_stack: Stack) -> Iterator[Stack]:
    """The shared stack with the fake's script, batch delay and realism as started."""
    vertex_stack.post("/script", [])
    vertex_stack.post("/batch-realism", {})
    vertex_stack.post("/batch-delay", {"delay_s": 0})
    yield vertex_stack
    vertex_stack.post("/script", [])
    vertex_stack.post("/batch-realism", {})
    vertex_stack.post("/batch-delay", {"delay_s": 0})


def vertex_client(s: Stack) -> Any:
    from evalq.client import Client
    from evalq.worker.settings import Settings

    return Client(
        Settings(
            redis_url=s.redis.url,
            gemini_base_url=s.gemini_url,
            use_vertexai=True,
            vertex_project=VERTEX["GOOGLE_CLOUD_PROJECT"],
            vertex_location=VERTEX["GOOGLE_CLOUD_LOCATION"],
            vertex_api_key=VERTEX["EVALQ_VERTEX_API_KEY"],
            vertex_batch_prefix=PREFIX,
        )
    )


def jobs_stats(s: Stack) -> dict[str, Any]:
    import urllib.request

    with urllib.request.urlopen(s.gemini_url + "/stats/vertex-batches", timeout=10) as reply:
        return dict(json.loads(reply.read()))


def objects(prefix: str) -> list[str]:
    return sorted(b.name for b in storage.Client().list_blobs(BUCKET, prefix=prefix))


def test_a_clean_run_goes_through_cloud_storage_at_the_batch_price(
    fresh: Stack, tmp_path: Path
) -> None:
    dataset = shapes(tmp_path / "data", 4)
    c = vertex_client(fresh)
    created = jobs_stats(fresh)["created"]
    job_id = c.submit("gecko-image", dataset, mode="batch").job_id
    summary = c.wait(job_id, timeout_s=300)
    assert summary.status == "finished" and summary.rows_scored == 4
    (record,) = c.batches(job_id)
    assert record.ingested and record.state == "SUCCEEDED" and record.requests == 12
    assert record.succeeded == 12 and record.name.startswith(
        "projects/evalq-test/locations/us-central1/batchPredictionJobs/"
    )
    assert jobs_stats(fresh)["created"] == created + 1
    assert fresh.stats()["requests"] == 0  # not one online call
    # The requests went to the job's folder under the prefix; the results came back there.
    names = objects(f"runs/evalq-{job_id}-{record.id}/")
    assert f"runs/evalq-{job_id}-{record.id}/requests.jsonl" in names
    assert any("/prediction-model-" in n and n.endswith("/predictions.jsonl") for n in names)
    assert summary.cost_usd == pytest.approx(online_cost_usd(summary) / 2, rel=1e-6)


def test_results_out_of_order_over_several_files_are_matched_by_their_labels(
    fresh: Stack, tmp_path: Path
) -> None:
    """Reversed lines, split over two predictions files, with fields evalq does not know: the
    same scores as a plain run (both without the call cache, so both send every request)."""
    dataset = shapes(tmp_path / "data", 4)
    c = vertex_client(fresh)
    plain = c.submit("gecko-image", dataset, mode="batch", use_cache=False).job_id
    c.wait(plain, timeout_s=300)
    fresh.post("/batch-realism", {"reorder": True, "split_output": True, "unknown_fields": True})
    shuffled = c.submit("gecko-image", dataset, mode="batch", use_cache=False).job_id
    summary = c.wait(shuffled, timeout_s=300)
    assert summary.status == "finished"
    assert row_scores(c, shuffled) == row_scores(c, plain)
    assert comparable(summary, digits=None) == comparable(c.summary(plain), digits=None)
    (record,) = c.batches(shuffled)
    assert record.succeeded == 12 and record.unmatched == 0
    names = objects(f"runs/evalq-{shuffled}-{record.id}/")
    assert sum(1 for n in names if "/predictions_" in n) == 2


def test_a_failed_line_is_unscored_with_its_reason_and_a_transient_one_goes_again(
    fresh: Stack, tmp_path: Path
) -> None:
    dataset = shapes(tmp_path / "data", 3)
    c = vertex_client(fresh)
    fresh.post(
        "/script",
        [
            {"match": "star\\? \\(check 1\\)", "status": 400},
            {"match": "star\\? \\(check 2\\)", "status": 503, "times": 1},
        ],
    )
    created = jobs_stats(fresh)["created"]
    job_id = c.submit("gecko-image", dataset, mode="batch", use_cache=False).job_id
    summary = c.wait(job_id, timeout_s=300)
    rows = {r.id: r for r in c.results(job_id)}
    assert_refused_unscored_and_transient_retried(rows, summary)
    assert jobs_stats(fresh)["created"] == created + 2


def test_cancelling_the_job_mid_batch_cancels_its_batch_prediction_job(
    fresh: Stack, tmp_path: Path
) -> None:
    dataset = shapes(tmp_path / "data", 3)
    c = vertex_client(fresh)
    fresh.post("/batch-delay", {"pending_s": 0, "running_s": 3600})
    ended = jobs_stats(fresh)["ended"].get("CANCELLED", 0)
    job_id = c.submit("gecko-image", dataset, mode="batch", use_cache=False).job_id
    wait_for(lambda: any(r.state == "RUNNING" for r in c.batches(job_id)), 120, "a batch RUNNING")
    c.cancel(job_id)
    (record,) = c.batches(job_id)
    assert record.state == "CANCELLED" and record.cancelled_by_us
    wait_for(
        lambda: jobs_stats(fresh)["ended"].get("CANCELLED", 0) == ended + 1,
        60,
        "the batch prediction job CANCELLED on the server",
    )
    assert c.summary(job_id).status == "cancelled"


def test_a_bucket_cloud_storage_does_not_have_is_one_error_line_and_nothing_is_stored(
    fresh: Stack, tmp_path: Path
) -> None:
    dataset = shapes(tmp_path / "data", 2)
    env = fresh.env()
    before = len(store_of(vertex_client(fresh)).list_jobs(1000))
    by_flag = _run_in_batch(env, dataset, "--vertex-batch-prefix", "gs://no-such-bucket/runs")
    by_setting = _run_in_batch(
        {**env, "EVALQ_VERTEX_BATCH_PREFIX": "gs://no-such-bucket/runs"}, dataset
    )
    for refused, named in (
        (by_flag, "--vertex-batch-prefix"),
        (by_setting, "EVALQ_VERTEX_BATCH_PREFIX"),
    ):
        assert refused.returncode != 0
        lines = [line for line in refused.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, refused.stderr
        assert named in lines[0] and "no-such-bucket" in lines[0]
    assert len(store_of(vertex_client(fresh)).list_jobs(1000)) == before


def test_a_worker_killed_while_reading_results_then_reattach_loses_and_doubles_nothing(
    fresh: Stack, gcs_emulator: GcsEmulator, tmp_path: Path
) -> None:
    """The job says SUCCEEDED without its output (late_output); Cloud Storage is stopped
    (SIGSTOP), the output attached, and the worker's ingest starts reading and hangs on it; the
    worker is SIGKILLed there. A new worker and `evalq resume` re-attach: no batch is created
    again, and the figures equal a run that was never interrupted."""
    dataset = shapes(tmp_path / "data", 4)
    c = vertex_client(fresh)
    calm_id = c.submit("gecko-image", dataset, mode="batch", use_cache=False).job_id
    calm = c.wait(calm_id, timeout_s=300)
    fresh.post("/batch-realism", {"late_output": -1})
    job_id = c.submit("gecko-image", dataset, mode="batch", use_cache=False).job_id
    wait_for(lambda: any(r.awaiting_output for r in c.batches(job_id)), 120, "SUCCEEDED, no output")
    created = jobs_stats(fresh)["created"]
    gcs_emulator.proc.send_signal(signal.SIGSTOP)
    try:
        fresh.post("/vertex-batches/attach-output", {})
        # The poll that saw the output handed the batch to an ingest, which reads it (hung).
        wait_for(
            lambda: all(
                r.state == "SUCCEEDED" and not r.awaiting_output for r in c.batches(job_id)
            ),
            60,
            "the output seen",
        )
        wait_for(lambda: jobs_stats(fresh)["gets_after_output"] >= 2, 60, "the ingest reading it")
        for proc in fresh.pool.procs:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        fresh.pool.procs.clear()
    finally:
        gcs_emulator.proc.send_signal(signal.SIGCONT)
    assert not any(r.ingested for r in c.batches(job_id))
    fresh.pool.start(concurrency=8, name="after-kill")

    evalq_stdout(fresh.env(), "resume", job_id)
    summary = c.wait(job_id, timeout_s=300)
    assert jobs_stats(fresh)["created"] == created
    assert summary.rows_done == summary.rows_total == 4
    assert comparable(summary, digits=None) == comparable(calm, digits=None)
    assert row_scores(c, job_id) == row_scores(c, calm_id)


def test_results_with_no_key_are_answered_online_once_and_the_job_says_so(
    fresh: Stack, tmp_path: Path
) -> None:
    """Lines come back without the labels that key them (no_metadata): nothing is matched by
    position, no second batch prediction job is created with the same requests, and each
    request is answered online once; `evalq status` says so."""
    dataset = shapes(tmp_path / "data", 3)
    c = vertex_client(fresh)
    plain = c.submit("gecko-image", dataset, mode="batch", use_cache=False).job_id
    c.wait(plain, timeout_s=300)
    fresh.post("/batch-realism", {"no_metadata": True})
    created, online = jobs_stats(fresh)["created"], fresh.stats()["requests"]
    job_id = c.submit("gecko-image", dataset, mode="batch", use_cache=False).job_id
    summary = c.wait(job_id, timeout_s=300)
    assert summary.status == "finished" and summary.rows_scored == 3
    assert row_scores(c, job_id) == row_scores(c, plain)
    assert jobs_stats(fresh)["created"] == created + 1
    assert fresh.stats()["requests"] - online == 9
    assert summary.batch is not None
    assert (summary.batch["results_unmatched"], summary.batch["requests_online"]) == (9, 9)

    shown = evalq_stdout(fresh.env(), "status", job_id)
    assert "9 requests answered online once" in shown


FORGED = "[FORGED by a bucket writer]"


def forged_lines(requests_blob: str) -> str:
    """What anyone who can write the batch prefix can plant: a results line for every request
    of the batch (its keys are in requests.jsonl), each answering "yes" (the shapes' images show no star) with an explanation
    that says it was forged, and claiming one token each way."""
    text = storage.Client().bucket(BUCKET).blob(requests_blob).download_as_text()
    reply = json.dumps({"explanation": f"{FORGED} it said so", "answer": "yes"})
    response = {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": reply}]}, "finishReason": "STOP"}
        ],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1},
    }
    lines = [
        json.dumps({"status": "", "request": json.loads(line)["request"], "response": response})
        for line in text.splitlines()
        if line.strip()
    ]
    return "".join(line + "\n" for line in lines)


def plant_then_attach(fresh: Stack, c: Any, job_id: str, name: str) -> list[str]:
    """Once the batch prediction job has written its output (held back from the job's GET by
    late_output), plant `name` beside Vertex's own files in its output folder, then let the
    job report its output; the names Vertex wrote."""
    wait_for(lambda: any(r.awaiting_output for r in c.batches(job_id)), 120, "SUCCEEDED, no output")
    (record,) = c.batches(job_id)
    folder = f"runs/evalq-{job_id}-{record.id}/"
    own = [n for n in objects(folder) if "/prediction-model-" in n]
    assert own, objects(folder)
    output = own[0].rsplit("/", 1)[0]
    planted = forged_lines(folder + "requests.jsonl")
    storage.Client().bucket(BUCKET).blob(f"{output}/{name}").upload_from_string(planted)
    fresh.post("/vertex-batches/attach-output", {})
    return [n.rsplit("/", 1)[1] for n in own]


def usage_by_role(summary: Any) -> dict[str, tuple[int, int, int]]:
    return {u["role"]: (u["calls"], u["prompt"], u["output"]) for u in summary.usage}


def test_a_planted_predictions_file_is_never_read_and_is_named_in_status(
    fresh: Stack, tmp_path: Path
) -> None:
    """A bucket writer plants `predictions-0.jsonl` (it sorts before Vertex's own
    `predictions.jsonl`) answering every request of the batch: only the file Vertex writes is
    read, every verdict is Vertex's, the planted object is named in `evalq status`, and
    nothing of it is billed."""
    dataset = shapes(tmp_path / "data", 3)
    c = vertex_client(fresh)
    plain_id = c.submit("gecko-image", dataset, mode="batch", use_cache=False).job_id
    plain = c.wait(plain_id, timeout_s=300)
    fresh.post("/batch-realism", {"late_output": -1})
    created = jobs_stats(fresh)["created"]
    job_id = c.submit("gecko-image", dataset, mode="batch", use_cache=False).job_id
    assert plant_then_attach(fresh, c, job_id, "predictions-0.jsonl") == ["predictions.jsonl"]
    summary = c.wait(job_id, timeout_s=300)
    assert summary.status == "finished"
    assert row_scores(c, job_id) == row_scores(c, plain_id)
    assert FORGED not in evalq_stdout(fresh.env(), "results", job_id)
    assert jobs_stats(fresh)["created"] == created + 1  # nothing asked again: no conflict
    assert usage_by_role(summary) == usage_by_role(plain)  # the planted lines bill nothing
    shown = " ".join(evalq_stdout(fresh.env(), "status", job_id).split())  # lines wrap
    assert "1 object in its output folder ignored, never read: predictions-0.jsonl" in shown


def test_a_planted_file_with_a_vertex_name_is_a_conflict_asked_again_never_a_verdict(
    fresh: Stack, tmp_path: Path
) -> None:
    """Vertex writes its results over two shards (split_output); a bucket writer plants a
    third with the same name pattern, `predictions_00000.jsonl`, answering every request: each
    request is answered twice, so neither answer is used, each is asked again once in a new
    batch (which nobody tampers with), and `evalq status` says so. The discarded lines bill
    only what the smaller of each request's two claims says (the planted lines claim less than
    Vertex's, so the job's own calls are billed as in a plain run, and no more)."""
    dataset = shapes(tmp_path / "data", 3)
    c = vertex_client(fresh)
    plain_id = c.submit("gecko-image", dataset, mode="batch", use_cache=False).job_id
    plain = c.wait(plain_id, timeout_s=300)
    fresh.post("/batch-realism", {"late_output": -1, "split_output": True})
    created = jobs_stats(fresh)["created"]
    job_id = c.submit("gecko-image", dataset, mode="batch", use_cache=False).job_id
    own = plant_then_attach(fresh, c, job_id, "predictions_00000.jsonl")
    assert own == ["predictions_00001.jsonl", "predictions_00002.jsonl"]
    fresh.post("/batch-realism", {})  # the batch that asks again is not tampered with
    summary = c.wait(job_id, timeout_s=300)
    assert summary.status == "finished"
    assert row_scores(c, job_id) == row_scores(c, plain_id)
    assert FORGED not in evalq_stdout(fresh.env(), "results", job_id)
    assert jobs_stats(fresh)["created"] == created + 2  # asked again once, in one new batch
    usage = usage_by_role(summary)
    assert usage.pop("unmatched") == (9, 9, 9)  # the planted lines' claims, the smaller ones
    assert usage == usage_by_role(plain)  # each request's own answer billed once
    assert summary.batch is not None and summary.batch["results_conflicts"] == 9
    shown = " ".join(evalq_stdout(fresh.env(), "status", job_id).split())
    assert "9 requests answered twice in the batch's output: asked again" in shown


def test_a_job_prefix_outside_the_workers_prefix_is_refused_at_submit_and_by_the_worker(
    fresh: Stack, tmp_path: Path
) -> None:
    """The client that knows EVALQ_VERTEX_BATCH_PREFIX refuses `--vertex-batch-prefix`
    outside it in one line; a job stored by a client that does not know it is paused by the
    worker with a reason naming the setting and the job's prefix, and nothing is written
    there."""
    dataset = shapes(tmp_path / "data", 2)
    outside = f"gs://{BUCKET}/elsewhere"
    refused = _run_in_batch(fresh.env(), dataset, "--vertex-batch-prefix", outside)
    line = one_line_refusal(refused)
    assert "--vertex-batch-prefix" in line and outside in line
    assert f"EVALQ_VERTEX_BATCH_PREFIX={PREFIX}" in line
    from evalq.client import Client
    from evalq.worker.settings import Settings

    known = vertex_client(fresh).settings
    unaware = Client(Settings(**{**known.model_dump(), "vertex_batch_prefix": None}))
    created = jobs_stats(fresh)["created"]
    job_id = unaware.submit(
        "gecko-image", dataset, mode="batch", use_cache=False, vertex_batch_prefix=outside
    ).job_id
    summary = unaware.wait(job_id, timeout_s=300)
    assert summary.status == "paused"
    assert summary.pause_reason is not None
    assert "EVALQ_VERTEX_BATCH_PREFIX" in summary.pause_reason and outside in summary.pause_reason
    assert jobs_stats(fresh)["created"] == created
    assert objects("elsewhere/") == []
    assert outside in evalq_stdout(fresh.env(), "status", job_id)


def _run_in_batch(env: dict[str, str], dataset: Path, *flags: str) -> CompletedProcess[str]:
    """`evalq run gecko-image DATASET --mode batch` with `flags`, as a user types it."""
    return run_evalq(env, "run", "gecko-image", str(dataset), "--mode", "batch", *flags)
