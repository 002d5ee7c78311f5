"""Gecko image jobs with several validator judges and with hand-written multiple-choice
questions, end to end: real Redis, real worker processes, the fake server over HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalq.stats.agreement import fleiss_kappa
from tests.conftest import FakeGemini, RedisServer, WorkerPool, worker_env
from tests.support.cli import evalq_stdout
from tests.support.datasets import write_rows
from tests.support.images import circle_png

pytestmark = pytest.mark.integration


def circle_file(path: Path, color: str, shift: int = 0) -> Path:
    path.write_bytes(circle_png(color, shift))
    return path


def test_two_judges_report_per_judge_scores_and_agreement(
    redis_server: RedisServer, fake: FakeGemini, workers: WorkerPool, tmp_path: Path
) -> None:
    # Two images of a red circle, not byte-identical: the judges' call cache would otherwise
    # answer the second row's "Is there a circle?" without a call.
    rows = [
        {
            "id": "match",
            "prompt": "a red circle",
            "image": str(circle_file(tmp_path / "a.png", "red")),
        },
        {
            "id": "near-miss",
            "prompt": "a blue circle",
            "image": str(circle_file(tmp_path / "b.png", "red", shift=4)),
        },
    ]
    data = write_rows(tmp_path / "d.jsonl", rows)
    # Whichever judge asks first about the red circle is told "no": the judges then disagree
    # on exactly one question of the four.
    fake.script(
        [
            {
                "match": r"Is the circle red\?",
                "reply": '{"explanation": "scripted", "answer": "no"}',
                "times": 1,
            }
        ]
    )
    env = worker_env(redis_server.url, fake.url)

    judges = ["gemini-mj-a", "gemini-mj-b"]
    summary = json.loads(
        evalq_stdout(
            env,
            "run",
            "gecko-image",
            str(data),
            "--judge-model",
            judges[0],
            "--judge-model",
            judges[1],
            "--rubric-model",
            "gemini-mj-writer",
            "--wait",
            "--json",
        )
    )
    assert summary["status"] == "finished"
    by_model = fake.stats()["by_model"]
    # One rubric per prompt, by the rubric model; every question to each judge.
    assert by_model == {"gemini-mj-writer": 2, "gemini-mj-a": 4, "gemini-mj-b": 4}
    metric = summary["metric_summary"]
    per_judge = metric["per_judge"]
    assert set(per_judge) == set(judges)
    assert sorted(per_judge[j]["mean_score"] for j in judges) == [0.5, 0.75]
    assert sorted(per_judge[j]["tag_scores"]["color"] for j in judges) == [0.0, 0.5]
    agreement = metric["agreement"]
    assert agreement["questions_compared"] == 4
    assert agreement["all_agree"] == pytest.approx(3 / 4)
    table = [["yes", "yes"], ["yes", "no"], ["yes", "yes"], ["no", "no"]]
    assert agreement["fleiss_kappa"] == pytest.approx(fleiss_kappa(table))
    # The row score is the mean over the judges; the job's mean is over rows.
    assert summary["mean_score"] == pytest.approx((0.75 + 0.5) / 2)
    job = summary["job_id"]
    results = {
        r["id"]: r
        for r in map(
            json.loads, evalq_stdout(env, "results", job, "--format", "jsonl").splitlines()
        )
    }
    match = results["match"]
    assert match["score"] == pytest.approx(0.75)
    assert sorted(e["score"] for e in match["details"]["judges"].values()) == [0.5, 1.0]
    assert match["details"]["rubric_model"] == "gemini-mj-writer"
    assert {q["judge_model"] for q in match["questions"]} == set(judges)
    assert len(match["questions"]) == 4
    assert results["near-miss"]["score"] == pytest.approx(0.5)
    human = evalq_stdout(env, "status", job)
    assert "per judge" in human
    assert "agreement" in human


@pytest.mark.parametrize("mode", ["per-question", "batched"])
def test_hand_written_multiple_choice_questions_score_correctly(
    client: Any, fake: FakeGemini, tmp_path: Path, mode: str
) -> None:
    image = circle_file(tmp_path / "blue.png", "blue")
    questions = [
        {
            "question": "What colour is the circle?",
            "choices": ["red", "blue", "green"],
            "answer": "blue",
            "tag": "color",
        },
        {
            "question": "How many circles are there?",
            "choices": ["one", "two", "three"],
            "answer": "b",  # the image has one: answered, and wrong
            "tag": "counting",
        },
        # Nothing the simulated judge can see: it says it cannot tell, which is no verdict.
        {"question": "Which animal is shown?", "choices": ["a cat", "a dog"], "answer": "a cat"},
        {"question": "Is there a circle?", "answer": "Yes", "tag": "object"},
    ]
    rows = [
        {"id": "mc", "prompt": "a blue circle", "image": str(image), "questions": questions},
        {
            "id": "bad",
            "prompt": "a blue circle",
            "image": str(image),
            "questions": [{**questions[0], "answer": "purple"}],
        },
    ]
    data = write_rows(tmp_path / f"{mode}.jsonl", rows)
    job = client.submit(
        "gecko-image", data, judge_model=f"gemini-mc-{mode}", options={"validator": mode}
    ).job_id
    summary = client.wait(job, timeout_s=120)
    results = {r.id: r for r in client.results(job)}
    row = results["mc"]
    assert [q.expected for q in row.questions] == ["b", "b", "a", "yes"]
    assert [q.answer for q in row.questions] == ["b", "a", None, "yes"]
    assert [q.result for q in row.questions] == [1, 0, None, 1]
    assert row.questions[2].reason == "parse_error"
    assert (row.status, row.score) == ("partial", pytest.approx(2 / 3))
    assert row.tag_scores == {"color": 1.0, "counting": 0.0, "object": 1.0}
    assert summary.unscored_by_reason == {"parse_error": 1}
    bad = results["bad"]
    assert (bad.status, bad.reason) == ("failed", "input_error")
    assert "questions[0].answer" in (bad.error or "")
    assert "What colour is the circle?" in (bad.error or "")
    assert summary.judge_calls == (1 if mode == "batched" else len(questions))
