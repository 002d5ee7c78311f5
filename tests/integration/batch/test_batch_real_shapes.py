"""Batch mode against the shapes the real Batch API answers with (the fake's `/batch-realism`
switches, each from a public report; docs/architecture/gemini-facts.md cites them), with real
Redis, real workers and the real client over HTTP.

The shapes: results reordered and unkeyed, per-request errors with gRPC codes and google.rpc
details, SUCCEEDED before the output is attached, results lines with fields the SDK does not
model or that are not JSON, and billed replies that are no verdict. Taken at face value they score
rows from each other's replies, poll a job forever, send and bill requests twice, hang a job on
one bad line or drop tokens: each test checks that one of those does not happen."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devtools.local import wait_for
from tests.support.datasets import write_rows
from tests.support.shapes import COLORS, SHAPES, shape_image
from tests.support.stack import Stack, stack

pytestmark = pytest.mark.integration
# One retry into the next batch keeps the rounds short; the bound is the same rule.
ENV = {
    "EVALQ_BATCH_POLL_INITIAL_S": "0.1",
    "EVALQ_BATCH_POLL_MAX_S": "0.3",
    "EVALQ_BATCH_REQUEST_RETRIES": "1",
    "EVALQ_BATCH_OUTPUT_WAIT_S": "4",
    "EVALQ_BATCH_MAX_BATCHES": "2",  # every other job here needs at most two
}
_cases = itertools.count()


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with stack(tmp_path_factory.mktemp("real-shapes"), **ENV) as s:
        yield s


@pytest.fixture
def s(shared: Stack) -> Iterator[Stack]:
    shared.post("/script", [])
    shared.post("/batch-realism", {})
    shared.reset_stats()
    yield shared
    shared.post("/script", [])
    shared.post("/batch-realism", {})


def case_rows(folder: Path, rows: int = 3) -> tuple[Path, str]:
    """Rows whose questions no other test asks (a case tag in each), so nothing is served
    from the call cache and every question is a batch request."""
    case = f"case{next(_cases)}x{folder.name[-6:]}"
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(rows):
        color, shape = COLORS[i % len(COLORS)], SHAPES[i % len(SHAPES)]
        image = shape_image(folder / f"{color}-{shape}.png", color, shape)
        out.append(
            {
                "id": f"row{i}",
                "prompt": f"a {color} {shape}",
                "image": image.name,
                "questions": [
                    {"question": f"Is there a {shape}? ({case} q{i}a)", "answer": "yes"},
                    {"question": f"Is the {shape} {color}? ({case} q{i}b)", "answer": "yes"},
                    {"question": f"Is there a star? ({case} q{i}c)", "answer": "no"},
                ],
            }
        )
    path = folder / "data.jsonl"
    write_rows(path, out)
    return path, case


def outcomes(client: Any, job_id: str) -> dict[str, list[tuple[str, str | None, Any]]]:
    return {
        r.id: [(q.status, q.reason, q.result) for q in r.questions] for r in client.results(job_id)
    }


def details(client: Any, job_id: str) -> dict[str, str]:
    return {q.question: q.detail or "" for r in client.results(job_id) for q in r.questions}


def test_reordered_keyed_results_each_reach_their_own_request(s: Stack, tmp_path: Path) -> None:
    """Answered inline, in reverse order, with the key echoed in metadata; and as a results
    file in another order: every verdict equals the same job's online verdict."""
    data, _ = case_rows(tmp_path / "data")
    client = s.client()
    online = client.submit("gecko-image", data, judge_model="gemini-2.5-flash")
    assert client.wait(online.job_id, timeout_s=120).status == "finished"
    for n, realism in enumerate(
        ({"file_answered_inline": True, "reorder": True}, {"reorder": True})
    ):
        s.post("/batch-realism", realism)
        model = f"gemini-2.5-flash-00{n + 1}"  # a new judge name: nothing from the cache
        job = client.submit("gecko-image", data, judge_model=model, mode="batch")
        summary = client.wait(job.job_id, timeout_s=120)
        assert summary.status == "finished", realism
        assert outcomes(client, job.job_id) == outcomes(client, online.job_id), realism
        assert summary.batch is not None and summary.batch["results_unmatched"] == 0


def test_results_without_a_key_are_never_used_and_never_bought_twice(
    s: Stack, tmp_path: Path
) -> None:
    """Reordered inlined responses with no metadata can't be matched: no row is scored from
    another's reply, nothing is matched by position, and no second batch is sent with the same
    requests. They are counted (and what they billed), and each request is answered online,
    once, at the online price, each through the gate every API call passes (the job's status,
    its spend cap's reservation); the job says so."""
    data, _ = case_rows(tmp_path / "data")
    s.post("/batch-realism", {"file_answered_inline": True, "reorder": True, "no_metadata": True})
    client = s.client()
    online_before = s.stats()["requests"]
    job = client.submit("gecko-image", data, mode="batch", max_cost_usd=5.0)
    summary = client.wait(job.job_id, timeout_s=120)
    assert summary.status == "finished"
    store = s.store()
    assert store.counters(job.job_id).calls_admitted == 9
    assert store.reserved(job.job_id) == 0  # each reserved, then settled
    assert summary.rows_scored == 3
    assert summary.batch is not None and summary.batch["results_unmatched"] == 9
    assert summary.batch["requests_online"] == 9
    assert s.stats()["batches"]["created"] == 1  # never a second batch of the same requests
    assert s.stats()["requests"] - online_before == 9  # each asked online once
    # Billed all the same: the 9 keyless replies count their tokens, under "unmatched".
    s.post("/batch-realism", {})
    matched = client.submit("gecko-image", data, judge_model="gemini-2.5-flash-001", mode="batch")
    once = client.wait(matched.job_id, timeout_s=120)  # the same 9 requests, answered once
    assert once.rows_scored == 3 and once.prompt_tokens > 0
    assert (summary.prompt_tokens, summary.output_tokens) == (
        2 * once.prompt_tokens,
        2 * once.output_tokens,
    )
    assert summary.tokens_by_role["unmatched"]["calls"] == 9
    assert summary.tokens_by_role["unmatched"]["prompt"] == once.prompt_tokens
    # The online answers at the online price, the keyless ones at the batch price.
    assert summary.cost_usd == pytest.approx(3 * once.cost_usd, rel=1e-6)


def test_grpc_coded_errors_retry_transient_ones_and_report_the_rest(
    s: Stack, tmp_path: Path
) -> None:
    """{code: 13, message} with no status name is INTERNAL: into the next batch, then scored.
    {code: 3} is INVALID_ARGUMENT: judge_error at once, with the server's message."""
    data, case = case_rows(tmp_path / "data")
    s.post("/batch-realism", {"grpc_errors": True})
    rules = [
        {"match": rf"star\? \({case} q0c\)", "status": 500, "times": 1},
        {"match": rf"star\? \({case} q1c\)", "status": 400},
    ]
    s.post("/script", rules)
    client = s.client()
    job = client.submit("gecko-image", data, mode="batch")
    summary = client.wait(job.job_id, timeout_s=120)
    assert summary.status == "finished"
    found = outcomes(client, job.job_id)
    assert found["row0"][2][0] == "ok"  # its INTERNAL went into the next batch
    assert found["row1"][2] == ("unscored", "judge_error", None)
    said = details(client, job.job_id)
    refused = next(d for q, d in said.items() if f"{case} q1c" in q)
    assert "3 INVALID_ARGUMENT" in refused
    assert summary.batch is not None and summary.batch["requests_retried"] == 1
    assert s.stats()["batches"]["created"] == 2


def test_errors_with_rpc_details_do_not_stop_the_polling(s: Stack, tmp_path: Path) -> None:
    """google-genai's batches.get fails to validate google.rpc `details`; evalq reads the raw
    body instead, so the job ends and the refused request carries the server's message."""
    data, case = case_rows(tmp_path / "data")
    s.post(
        "/batch-realism",
        {"file_answered_inline": True, "grpc_errors": True, "rpc_details": True},
    )
    s.post("/script", [{"match": rf"star\? \({case} q2c\)", "status": 400}])
    client = s.client()
    job = client.submit("gecko-image", data, mode="batch")
    summary = client.wait(job.job_id, timeout_s=120)
    assert summary.status == "finished"
    assert outcomes(client, job.job_id)["row2"][2] == ("unscored", "judge_error", None)
    assert summary.unscored_by_reason == {"judge_error": 1}


def test_succeeded_before_its_output_is_polled_again_not_sent_again(
    s: Stack, tmp_path: Path
) -> None:
    data, _ = case_rows(tmp_path / "data")
    s.post("/batch-realism", {"late_output": 3})
    client = s.client()
    job = client.submit("gecko-image", data, mode="batch")
    summary = client.wait(job.job_id, timeout_s=120)
    assert summary.status == "finished" and summary.rows_scored == 3
    stats = s.stats()["batches"]
    assert stats["created"] == 1 and stats["requests"] == 9  # nothing sent or billed twice
    assert stats["output_missing_gets"] >= 1


def test_output_that_never_comes_pauses_the_job_and_resume_looks_again(
    s: Stack, tmp_path: Path
) -> None:
    """The batch never gets its output (the fake's batch keeps that shape for its life): the
    job pauses with the reason, having sent nothing twice; resume polls the same batch again
    (and pauses again, as nothing came), still without a new batch."""
    data, _ = case_rows(tmp_path / "data")
    s.post("/batch-realism", {"late_output": -1})
    client = s.client()
    job_id = client.submit("gecko-image", data, mode="batch").job_id
    wait_for(lambda: client.summary(job_id).status == "paused", 60, "the job to pause")
    reason = client.summary(job_id).pause_reason or ""
    assert "SUCCEEDED but no results were attached" in reason
    assert "EVALQ_BATCH_OUTPUT_WAIT_S" in reason
    looked = s.stats()["batches"]["output_missing_gets"]
    assert s.stats()["batches"]["created"] == 1
    client.resume(job_id)
    wait_for(
        lambda: (
            s.stats()["batches"]["output_missing_gets"] > looked
            and client.summary(job_id).status == "paused"
        ),
        60,
        "the resumed job to look again, then pause again",
    )
    assert s.stats()["batches"]["created"] == 1  # the same batch, never sent again
    assert s.stats()["requests"] == 0  # and never sent online either


def test_results_lines_with_unmodelled_fields_are_read(s: Stack, tmp_path: Path) -> None:
    data, _ = case_rows(tmp_path / "data")
    s.post("/batch-realism", {"unknown_fields": True})
    client = s.client()
    job = client.submit("gecko-image", data, mode="batch")
    summary = client.wait(job.job_id, timeout_s=120)
    assert summary.status == "finished" and summary.rows_scored == 3
    assert summary.unscored_by_reason == {}


def test_a_results_line_that_is_not_json_fails_only_its_own_request(
    s: Stack, tmp_path: Path
) -> None:
    data, _ = case_rows(tmp_path / "data")
    s.post("/batch-realism", {"bad_line": True})
    client = s.client()
    job = client.submit("gecko-image", data, mode="batch")
    summary = client.wait(job.job_id, timeout_s=120)
    assert summary.status == "finished"
    assert summary.unscored_by_reason == {"judge_error": 1}
    (bad,) = [d for d in details(client, job.job_id).values() if "not JSON" in d]
    assert "results line 2" in bad
    assert (summary.rows_scored, summary.rows_partial) == (2, 1)  # its row: its other questions


def test_billed_replies_that_are_no_verdict_count_their_tokens_in_batch(
    s: Stack, tmp_path: Path
) -> None:
    """Replayed in a batch: a blocked prompt (12,559 prompt tokens, as recorded), a MODEL_ARMOR
    stop and a body with neither candidates nor promptFeedback. Each is unscored with its own
    reason, and the job counts exactly their usage."""
    data, case = case_rows(tmp_path / "data", rows=1)
    blocked = {
        "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
        "usageMetadata": {"promptTokenCount": 12559, "totalTokenCount": 12559},
        "modelVersion": "gemini-2.5-flash",
    }
    armored = {
        "candidates": [{"content": {}, "finishReason": "MODEL_ARMOR", "index": 0}],
        "usageMetadata": {
            "promptTokenCount": 300,
            "candidatesTokenCount": 0,
            "totalTokenCount": 300,
        },
    }
    empty = {"usageMetadata": {"promptTokenCount": 41, "totalTokenCount": 41}}
    s.post(
        "/script",
        [
            {"match": rf"\({case} q0a\)", "status": 200, "body": blocked},
            {"match": rf"\({case} q0b\)", "status": 200, "body": armored},
            {"match": rf"\({case} q0c\)", "status": 200, "body": empty},
        ],
    )
    client = s.client()
    job = client.submit("gecko-image", data, mode="batch")
    summary = client.wait(job.job_id, timeout_s=120)
    assert outcomes(client, job.job_id)["row0"] == [
        ("unscored", "blocked", None),
        ("unscored", "blocked", None),
        ("unscored", "truncated", None),
    ]
    assert summary.status == "finished" and summary.rows_failed == 1
    assert (summary.prompt_tokens, summary.output_tokens) == (12559 + 300 + 41, 0)
    assert summary.judge_calls == 3


def test_the_batches_of_a_job_are_bounded_and_shown(s: Stack, tmp_path: Path) -> None:
    """Rubrics, then questions: two rounds. One rubric's INTERNAL error puts its row's
    questions in a third round, over EVALQ_BATCH_MAX_BATCHES=2: the job pauses saying so, and
    `evalq status` shows the bound."""
    from tests.support.cli import evalq_stdout

    folder = tmp_path / "data"
    folder.mkdir()
    marker = f"bound{next(_cases)}"
    rows = [
        {
            "id": f"row{i}",
            "prompt": f"a {COLORS[i]} {SHAPES[i]} {marker}{i}",
            "image": shape_image(folder / f"{i}.png", COLORS[i], SHAPES[i]).name,
        }
        for i in range(2)
    ]
    write_rows(folder / "data.jsonl", rows)
    s.post("/batch-realism", {"grpc_errors": True})
    s.post("/script", [{"match": f"{marker}0", "status": 500, "times": 1}])
    client = s.client()
    job_id = client.submit("gecko-image", folder / "data.jsonl", mode="batch").job_id
    wait_for(lambda: client.summary(job_id).status == "paused", 60, "the job to pause")
    assert "EVALQ_BATCH_MAX_BATCHES=2" in (client.summary(job_id).pause_reason or "")
    assert s.stats()["batches"]["created"] == 2
    shown = json.loads(evalq_stdout(s.env(), "status", job_id, "--json"))
    assert shown["batches_max"] == 2 and len(shown["batches"]) == 2
    assert "2 batches of at most 2 for this job" in evalq_stdout(s.env(), "status", job_id)
