"""Gecko image jobs end to end: real Redis, real worker processes, the fake server over HTTP."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from evalq.worker.store import RowRef
from tests.conftest import FakeGemini, RedisServer, WorkerPool, worker_env
from tests.support.cli import evalq_stdout, run_evalq
from tests.support.datasets import one_row, png, write_rows, yes_no
from tests.support.stores import store_of

pytestmark = pytest.mark.integration

# The fake's answer to each question of a one-row job (judged_row), by the question's marker.
# Replies as judges word them: the first four read as yes, no, yes, yes; the last two not at all.
AWKWARD: dict[str, dict[str, Any]] = {
    "Q-one": {"reply": "Yes."},
    "Q-two": {"reply": "**Verdict:** no"},
    "Q-three": {"reply": '```json\n{"explanation": "ok", "answer": "yes"}\n```'},
    "Q-four": {"reply": "Looking closely, I would say the answer is yes, it is there."},
    "Q-five": {"reply": "I really cannot tell."},
    "Q-six": {"reply": "yes or no? unclear"},
}
# A reply cut by safety, a prompt blocked, a bad request, and one question answered.
BLOCKED: dict[str, dict[str, Any]] = {
    "Bq-safety": {"finish_reason": "SAFETY"},
    "Bq-prompt": {"block_reason": "SAFETY"},
    "Bq-bad": {"status": 400},
    "Bq-fine": {"reply": "yes"},
}


def judged_row(
    client: Any, fake: FakeGemini, folder: Path, answers: dict[str, dict[str, Any]]
) -> tuple[Any, Any]:
    """A job of one gecko-image row asking `MARKER?` for each marker in `answers`, the fake
    answering each as its rule there says; the job's summary and the row's result."""
    fake.script([{"match": marker, **rule} for marker, rule in answers.items()])
    questions = [yes_no(f"{marker}?") for marker in answers]
    job = client.submit("gecko-image", one_row(png(folder / "a.png"), questions)).job_id
    summary = client.wait(job, timeout_s=60)
    (row,) = client.results(job)
    return summary, row


def test_example_dataset_matching_prompts_score_higher(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    from evalq.examples.gecko import write_gecko_image_example

    dataset = write_gecko_image_example(tmp_path / "example")
    submitted = client.submit("gecko-image", dataset, judge_model="gemini-example-test")
    summary = client.wait(submitted.job_id, timeout_s=240)
    rows = {r.id: r for r in client.results(submitted.job_id)}
    assert summary.status == "finished"
    assert summary.rows_done == summary.rows_total == len(rows) > 0
    assert summary.simulated  # the fake judge is labelled wherever results are shown
    assert all(r.simulated for r in rows.values())
    assert summary.judge_calls > 0
    assert summary.prompt_tokens > 0
    assert summary.output_tokens > 0
    pairs = [
        (rows[k], rows[k.replace("-match", "-near-miss")]) for k in rows if k.endswith("-match")
    ]
    assert pairs
    for match, near_miss in pairs:
        assert match.score is not None
        assert near_miss.score is not None
        assert match.score > near_miss.score, (match.id, match.score, near_miss.score)
        assert match.coverage == 1.0
    assert set(summary.tag_scores) >= {"object", "color"}
    # A second job reuses every rubric: same prompts, same judge model, same template.
    again = client.submit("gecko-image", dataset, judge_model="gemini-example-test")
    summary2 = client.wait(again.job_id, timeout_s=240)
    assert summary2.rubric_cache_hits == summary.rows_total
    assert summary2.mean_score == pytest.approx(summary.mean_score)


def test_awkward_replies_parse_and_unreadable_ones_are_unscored(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    summary, row = judged_row(client, fake, tmp_path, AWKWARD)
    assert [q.answer for q in row.questions] == ["yes", "no", "yes", "yes", None, None]
    assert [q.result for q in row.questions] == [1, 0, 1, 1, None, None]
    assert [q.reason for q in row.questions][4:] == ["parse_error", "parse_error"]
    assert row.status == "partial"
    assert row.score == pytest.approx(3 / 4)  # unscored questions are excluded, not counted as 0
    assert summary.unscored_by_reason == {"parse_error": 2}
    assert summary.rows_partial == 1


def test_all_unparseable_row_fails_without_a_score(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    image = png(tmp_path / "a.png")
    fake.script([{"match": "Zq", "reply": "Hmm."}])
    data = write_rows(
        tmp_path / "d.jsonl",
        [
            {
                "id": "r",
                "prompt": "p",
                "image": str(image),
                "questions": [yes_no("Zq1?"), yes_no("Zq2?")],
            }
        ],
    )
    job = client.submit("gecko-image", data).job_id
    summary = client.wait(job, timeout_s=60)
    (row,) = client.results(job)
    assert (row.status, row.score, row.reason) == ("failed", None, "parse_error")
    assert summary.mean_score is None
    assert summary.rows_failed == 1


def test_blocked_and_bad_request_are_unscored_with_reasons(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    _, row = judged_row(client, fake, tmp_path, BLOCKED)
    assert [q.reason for q in row.questions] == ["blocked", "blocked", "judge_error", None]
    assert (row.status, row.score) == ("partial", 1.0)


def test_daily_quota_pauses_only_that_job_and_resume_finishes_it(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    image = png(tmp_path / "a.png")
    fake.script(
        [{"match": "Dq-day", "status": 429, "quota": "day"}, {"match": "Dq-", "reply": "yes"}]
    )
    rows = [  # distinct images, so no call is served from the cache
        {
            "id": color,
            "prompt": "p",
            "image": str(png(tmp_path / f"{color}.png", color)),
            "questions": [yes_no("Dq-ok?"), yes_no("Dq-day?")],
        }
        for color in ("red", "green", "blue")
    ]
    other_rows = [
        {"id": "o", "prompt": "p", "image": str(image), "questions": [yes_no("Dq-other?")]}
    ]
    job = client.submit("gecko-image", write_rows(tmp_path / "d.jsonl", rows)).job_id
    other = client.submit("gecko-image", write_rows(tmp_path / "o.jsonl", other_rows)).job_id
    paused = client.wait(job, timeout_s=60)
    assert paused.status == "paused"
    assert "daily quota" in (paused.pause_reason or "")
    assert paused.rows_done == 0  # nothing was scored as 0 or unscored: the rows wait
    assert client.wait(other, timeout_s=60).status == "finished"  # the other job went on
    fake.script([{"match": "Dq-", "reply": "yes"}])  # a new day
    calls_before = fake.stats()["requests"]
    answered = sum(len(store_of(client).verdicts(RowRef(job, line))) for line in ("1", "2", "3"))
    assert answered < 6  # at least the day-quota questions wait unanswered
    assert client.resume(job) == 3
    done = client.wait(job, timeout_s=60)
    assert (done.status, done.rows_scored, done.mean_score) == ("finished", 3, 1.0)
    assert done.unscored_by_reason == {}
    # Verdicts stored before the pause were reused: only the unanswered questions are asked.
    assert fake.stats()["requests"] - calls_before == 6 - answered


def test_429_is_retried_after_the_delay_the_server_asked_for(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    image = png(tmp_path / "a.png")
    fake.script(
        [
            {"match": "Rq-limited", "status": 429, "retry_delay_s": 2, "times": 2},
            {"match": "Rq-limited", "reply": "yes"},
        ]
    )
    data = one_row(image, [yes_no("Rq-limited?")])
    job = client.submit("gecko-image", data).job_id
    summary = client.wait(job, timeout_s=60)
    (row,) = client.results(job)
    assert (row.status, row.score) == ("scored", 1.0)
    assert summary.rate_limited == 2
    events = [e for e in fake.stats()["events"] if e.get("rule") in (0, 1)]
    assert [e["status"] for e in events] == [429, 429, 200]
    gaps = [b["t"] - a["t"] for a, b in itertools.pairwise(events)]
    assert all(gap >= 2.0 for gap in gaps), (
        gaps
    )  # waited what RetryInfo asked, as a Celery countdown


def test_transient_503_is_retried_in_process(client: Any, fake: FakeGemini, tmp_path: Path) -> None:
    image = png(tmp_path / "a.png")
    fake.script([{"match": "Tq", "status": 503, "times": 2}, {"match": "Tq", "reply": "no"}])
    data = one_row(image, [yes_no("Tq?", "no")])
    job = client.submit("gecko-image", data).job_id
    summary = client.wait(job, timeout_s=60)
    (row,) = client.results(job)
    assert (row.status, row.score) == ("scored", 1.0)
    assert summary.retries == 2
    assert summary.judge_calls == 3


def test_bad_rows_fail_alone_and_the_rest_are_scored(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    png(tmp_path / "good.png")
    (tmp_path / "notimage.png").write_text("this is text, not a png")
    rows = [
        {"id": "good", "prompt": "p", "image": "good.png", "questions": [yes_no("Gq?")]},
        {"id": "no-prompt", "image": "good.png"},
        {"id": "missing-image", "prompt": "p", "image": "nowhere.png"},
        {
            "id": "not-an-image",
            "prompt": "p",
            "image": "notimage.png",
            "questions": [yes_no("Gq?")],
        },
        {
            "id": "url-down",
            "prompt": "p",
            "image": "http://127.0.0.1:9/x.png",
            "questions": [yes_no("Gq?")],
        },
    ]
    fake.script([{"match": "Gq", "reply": "yes"}])
    job = client.submit("gecko-image", write_rows(tmp_path / "d.jsonl", rows)).job_id
    summary = client.wait(job, timeout_s=60)
    results = {r.id: r for r in client.results(job)}
    assert results["good"].status == "scored"
    for row_id, field in [
        ("no-prompt", "prompt"),
        ("missing-image", "image"),
        ("not-an-image", "image"),
        ("url-down", "image"),
    ]:
        row = results[row_id]
        assert (row.status, row.score, row.reason) == ("failed", None, "input_error"), row_id
        assert f"row {row_id}" in (row.error or "")
        assert f"'{field}'" in (row.error or "")
    assert summary.rows_failed_by_reason == {"input_error": 4}
    assert summary.rows_scored == 1


def test_cli_run_status_results_jobs(
    redis_server: RedisServer, fake: FakeGemini, workers: WorkerPool, tmp_path: Path
) -> None:
    image = png(tmp_path / "a.png")
    fake.script([{"match": "Cq-yes", "reply": "yes"}, {"match": "Cq-no", "reply": "no"}])
    rows = [
        {
            "id": "a",
            "prompt": "p1",
            "image": str(image),
            "questions": [yes_no("Cq-yes?", tag="color"), yes_no("Cq-no?")],
        },
        {"id": "b", "prompt": "p2", "image": str(image), "questions": [yes_no("Cq-yes?")]},
    ]
    data = write_rows(tmp_path / "d.jsonl", rows)
    env = worker_env(redis_server.url, fake.url)

    summary = json.loads(evalq_stdout(env, "run", "gecko-image", str(data), "--wait", "--json"))
    keys = {
        "job_id",
        "metric",
        "rows_total",
        "rows_scored",
        "rows_partial",
        "rows_failed",
        "mean_score",
        "ci95",
        "tag_scores",
        "unscored_by_reason",
        "judge_calls",
        "prompt_tokens",
        "output_tokens",
    }
    assert keys <= set(summary)
    assert (summary["rows_total"], summary["rows_scored"], summary["mean_score"]) == (2, 2, 0.75)
    assert summary["tag_scores"] == {"color": 1.0, "object": 0.5}
    assert set(summary["tag_ci95"]) == set(summary["tag_counts"]) == {"color", "object"}
    assert summary["ci_method"] in ("wilson", "wilson-bound", "bca")
    job = summary["job_id"]
    assert json.loads(evalq_stdout(env, "status", job, "--json"))["mean_score"] == 0.75
    human = evalq_stdout(env, "status", job)
    assert "mean score" in human
    assert "0.750" in human
    lines = [
        json.loads(line)
        for line in evalq_stdout(env, "results", job, "--format", "jsonl").splitlines()
    ]
    assert [r["id"] for r in lines] == ["a", "b"]
    for key in ("id", "prompt", "status", "score", "tag_scores", "coverage", "questions"):
        assert key in lines[0]
    assert set(lines[0]["questions"][0]) >= {
        "question",
        "tag",
        "expected",
        "answer",
        "result",
        "status",
        "reason",
    }
    out = tmp_path / "r.csv"
    evalq_stdout(env, "results", job, "--format", "csv", "--out", str(out))
    assert out.read_text().splitlines()[0].startswith("id,line,prompt,status,score")
    assert job in evalq_stdout(env, "jobs")


def test_cli_rejects_a_file_that_is_not_a_dataset(
    redis_server: RedisServer, fake: FakeGemini, tmp_path: Path
) -> None:
    bogus = tmp_path / "notes.jsonl"
    bogus.write_text("just some notes\nnothing else\n")
    before = redis_server.client().zcard("evalq:jobs")
    done = run_evalq(worker_env(redis_server.url, fake.url), "run", "gecko-image", str(bogus))
    assert done.returncode == 2
    assert "not a JSONL dataset" in done.stderr
    assert redis_server.client().zcard("evalq:jobs") == before  # nothing was enqueued
