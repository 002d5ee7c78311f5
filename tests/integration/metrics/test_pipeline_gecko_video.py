"""Gecko video jobs end to end (real Redis, worker processes, the fake server over HTTP), and
what the two validator modes cost for both Gecko metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalq.examples.video import GECKO_VIDEO_EXAMPLES, clip_bytes
from tests.conftest import FakeGemini, RedisServer, WorkerPool, worker_env
from tests.support.cli import waited_summary
from tests.support.datasets import write_rows

pytestmark = pytest.mark.integration


def test_example_matching_prompts_score_higher_in_both_validator_modes(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    from evalq.examples.video import write_gecko_video_example

    dataset = write_gecko_video_example(tmp_path / "example")
    summaries, rows = {}, {}
    for mode in ("per-question", "batched"):
        job = client.submit(
            "gecko-video",
            dataset,
            judge_model=f"gemini-video-example-{mode}",
            options={"validator": mode},
        )
        summaries[mode] = client.wait(job.job_id, timeout_s=240)
        rows[mode] = {r.id: r for r in client.results(job.job_id)}
    per = summaries["per-question"]
    assert per.status == "finished"
    assert per.rows_done == per.rows_total == 2 * len(GECKO_VIDEO_EXAMPLES)
    assert per.simulated
    pairs = [(k, k.replace("-match", "-near-miss")) for k in rows["per-question"] if "-match" in k]
    assert len(pairs) == len(GECKO_VIDEO_EXAMPLES)
    for match_id, near_id in pairs:
        match, near = rows["per-question"][match_id], rows["per-question"][near_id]
        assert match.score is not None
        assert near.score is not None
        assert match.score > near.score, (match_id, match.score, near.score)
        assert match.coverage == 1.0
    assert {"action", "temporal relation", "object", "color"} <= set(per.tag_scores)
    # Motion is what the near misses get wrong.
    assert per.tag_scores["temporal relation"] < per.tag_scores["object"]
    # Batched: the same answers from one validator call per row instead of one per question.
    batched = summaries["batched"]
    assert batched.mean_score == pytest.approx(per.mean_score)
    for row_id, row in rows["per-question"].items():
        assert rows["batched"][row_id].score == pytest.approx(row.score)
    questions = per.metric_summary["questions"]
    assert per.metric_summary["validator"] == {"per-question": per.rows_total}
    assert batched.metric_summary["validator"] == {"batched": per.rows_total}
    # A rubric per row, then a call per question, or a call per row; a question asked twice
    # of the same clip (match and near miss share clips) is served from the call cache.
    assert per.judge_calls + per.cache_hits == per.rows_total + questions
    assert batched.judge_calls + batched.cache_hits == 2 * per.rows_total
    assert batched.prompt_tokens < per.prompt_tokens


def video_question(text: str, answer: str, tag: str = "action") -> dict[str, Any]:
    return {
        "question": text,
        "choices": ["a) it stays still", "b) it moves right", "c) it moves left", "d) it grows"],
        "answer": answer,
        "tag": tag,
    }


def image_question(text: str, answer: str = "yes", tag: str = "object") -> dict[str, str]:
    return {"question": text, "answer": answer, "tag": tag}


def batched_reply(answers: dict[int, str]) -> str:
    return json.dumps(
        {
            "answers": [
                {"question_id": n, "explanation": "scripted", "answer": a}
                for n, a in answers.items()
            ]
        }
    )


@pytest.mark.parametrize("metric", ["gecko-video", "gecko-image"])
def test_scripted_replies_score_the_same_in_both_modes_and_cost_what_they_should(
    client: Any, fake: FakeGemini, tmp_path: Path, metric: str
) -> None:
    media_field = "video" if metric == "gecko-video" else "image"
    media = tmp_path / ("clip.avi" if media_field == "video" else "pic.png")
    if media_field == "video":
        media.write_bytes(clip_bytes(GECKO_VIDEO_EXAMPLES[0]))
    else:
        from PIL import Image

        Image.new("RGB", (32, 32), "red").save(media, format="PNG")
    tag = "Mv" if media_field == "video" else "Mi"
    picks = {1: ("b", "yes"), 2: ("c", "no"), 3: ("a", "no")}  # scripted answer per question
    expected = {1: ("b", "yes"), 2: ("b", "yes"), 3: ("a", "no")}  # right answer per question
    rows = []
    rules: list[dict[str, Any]] = []
    for r in (1, 2):
        qs = []
        for n in (1, 2, 3):
            text = f"{tag}-r{r}-q{n}?"
            right = expected[n][0] if media_field == "video" else expected[n][1]
            qs.append(
                video_question(text, right)
                if media_field == "video"
                else image_question(text, right)
            )
        rows.append({"id": f"r{r}", "prompt": "p", media_field: media.name, "questions": qs})
        batch_kind = "video_questions" if media_field == "video" else "questions"
        answers = {n: picks[n][0 if media_field == "video" else 1] for n in (1, 2, 3)}
        rules.append(
            {"match": f"kind={batch_kind}>[\\s\\S]*{tag}-r{r}-q1", "reply": batched_reply(answers)}
        )
        rules += [{"match": f"{tag}-r{r}-q{n}", "reply": answers[n]} for n in (1, 2, 3)]
    fake.script(rules)
    dataset = write_rows(tmp_path / "d.jsonl", rows)
    summaries, results = {}, {}
    for mode in ("per-question", "batched"):
        job = client.submit(
            metric,
            dataset,
            judge_model=f"gemini-modes-{metric}-{mode}",
            options={"validator": mode},
        )
        summaries[mode] = client.wait(job.job_id, timeout_s=60)
        results[mode] = {r.id: r for r in client.results(job.job_id)}
    per, batched = summaries["per-question"], summaries["batched"]
    assert per.judge_calls == 6  # 2 rows x 3 questions
    assert batched.judge_calls == 2  # one call per row
    assert per.mean_score == batched.mean_score == pytest.approx(2 / 3)
    for row_id in ("r1", "r2"):
        a, b = results["per-question"][row_id], results["batched"][row_id]
        assert [q.result for q in a.questions] == [q.result for q in b.questions] == [1, 0, 1]
        assert a.tag_scores == b.tag_scores
    assert per.unscored_by_reason == batched.unscored_by_reason == {}


def test_letters_in_the_forms_judges_write_and_a_batched_reply_missing_a_question(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    clip = tmp_path / "clip.avi"
    clip.write_bytes(clip_bytes(GECKO_VIDEO_EXAMPLES[0]))
    forms = ["b", "(b)", "B) it moves right", "Answer: b", '```json\n{"answer": "b"}\n```', "hmm"]
    questions = [video_question(f"Lf-{n}?", "b") for n in range(len(forms))]
    fake.script(
        [
            {"match": "kind=video_questions>", "reply": batched_reply({1: "b", 2: "(c)", 4: "b"})},
            *({"match": f"Lf-{n}\\?", "reply": form} for n, form in enumerate(forms)),
        ]
    )
    dataset = write_rows(
        tmp_path / "d.jsonl",
        [{"id": "r", "prompt": "p", "video": clip.name, "questions": questions}],
    )
    job = client.submit("gecko-video", dataset, judge_model="gemini-letter-forms")
    summary = client.wait(job.job_id, timeout_s=60)
    (row,) = client.results(job.job_id)
    assert [q.answer for q in row.questions] == ["b", "b", "b", "b", "b", None]
    assert row.questions[-1].reason == "parse_error"
    assert (row.status, row.score) == ("partial", 1.0)  # unscored is not 0
    assert summary.unscored_by_reason == {"parse_error": 1}
    job = client.submit(
        "gecko-video",
        dataset,
        judge_model="gemini-letter-forms-b",
        options={"validator": "batched"},
    )
    summary = client.wait(job.job_id, timeout_s=60)
    (row,) = client.results(job.job_id)
    assert summary.judge_calls == 1
    assert [q.result for q in row.questions] == [1, 0, None, 1, None, None]
    assert {q.reason for q in row.questions if q.result is None} == {"parse_error"}
    assert "question 3" in (row.questions[2].detail or "")
    assert summary.unscored_by_reason == {"parse_error": 3}


def test_cli_runs_a_batched_video_job(
    redis_server: RedisServer, fake: FakeGemini, workers: WorkerPool, tmp_path: Path
) -> None:
    from evalq.examples.video import write_gecko_video_example

    dataset = write_gecko_video_example(tmp_path / "example")
    env = worker_env(redis_server.url, fake.url)
    flags = ["--validator", "batched", "--judge-model", "gemini-video-cli"]
    summary = waited_summary(env, "run", "gecko-video", str(dataset), *flags)
    assert summary["metric"] == "gecko-video"
    assert summary["rows_scored"] == summary["rows_total"] == 2 * len(GECKO_VIDEO_EXAMPLES)
    assert summary["judge_calls"] == 2 * summary["rows_total"]
    assert summary["metric_summary"]["validator"] == {"batched": summary["rows_total"]}
