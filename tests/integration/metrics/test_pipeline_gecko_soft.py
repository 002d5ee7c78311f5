"""Gecko --soft end to end (real Redis, real workers, the fake server over HTTP): on a judge
that gives log probabilities the scores are the probabilities of the expected answers, as this
test works them out from the fake's own wire replies; a judge recorded refusing them is refused
at submit; one that refuses at its calls pauses the job with the API's message in status."""

from __future__ import annotations

import json
import math
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from evalq.core.errors import DatasetError
from tests.conftest import FakeGemini, RedisServer
from tests.support.cli import evalq_stdout
from tests.support.datasets import marked_rows, png, write_rows, yes_no
from tests.support.recorded import recorded_logprobs
from tests.support.stack import worker_env

pytestmark = pytest.mark.integration

JUDGE = "gemini-2.0-flash"  # gives log probabilities on the Gemini API (python-genai#1921)

# The validator's scripted verdict per question (the reply text is what the fake's
# probabilities hang on, so the test can ask the fake for the same reply itself).
REPLIES = {
    "Soft-A": '{"explanation": "scripted A", "answer": "yes"}',
    "Soft-B": '{"explanation": "scripted B", "answer": "yes"}',
    "Soft-C": '{"explanation": "scripted C", "answer": "no"}',
}


def wire_probability(fake_url: str, marker: str, expected: str) -> float:
    """p(expected) / (p(yes) + p(no)) from the fake's raw reply to a request the scripted rule
    answers, read here from the JSON without evalq's reader."""
    payload = {
        "contents": [{"role": "user", "parts": [{"text": f"{marker}? (yes or no)"}]}],
        "generationConfig": {"responseLogprobs": True, "logprobs": 5},
    }
    request = urllib.request.Request(
        f"{fake_url}/v1beta/models/{JUDGE}:generateContent",
        data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as reply:
        candidate = json.loads(reply.read())["candidates"][0]
    text = candidate["content"]["parts"][0]["text"]
    assert text == REPLIES[marker]
    result = candidate["logprobsResult"]
    answer = json.loads(text)["answer"]
    step = max(i for i, c in enumerate(result["chosenCandidates"]) if c["token"] == answer)
    mass = {"yes": 0.0, "no": 0.0}
    for c in result["topCandidates"][step]["candidates"]:
        if c["token"].strip().lower() in mass:
            mass[c["token"].strip().lower()] += math.exp(c["logProbability"])
    return mass[expected] / (mass["yes"] + mass["no"])


def submit_soft(client: Any, folder: Path, rows: list[dict[str, Any]], judge_model: str) -> str:
    """A --soft gecko-image job of `rows` (written to `folder`) for `judge_model`; its id."""
    data = write_rows(folder / "d.jsonl", rows)
    return client.submit(
        "gecko-image", data, judge_model=judge_model, options={"soft": True}
    ).job_id


def test_soft_scores_are_the_probabilities_of_the_expected_answers(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    image = png(tmp_path / "a.png", "red")
    rows = [
        {
            "id": "r1",
            "prompt": "p",
            "image": str(image),
            "questions": [yes_no("Soft-A?", "yes", "object"), yes_no("Soft-B?", "no", "color")],
        },
        {"id": "r2", "prompt": "p", "image": str(image), "questions": [yes_no("Soft-C?", "no")]},
    ]
    fake.script([{"match": marker, "reply": reply} for marker, reply in REPLIES.items()])
    job = submit_soft(client, tmp_path, rows, JUDGE)
    done = client.wait(job, timeout_s=120)
    assert done.status == "finished", done.pause_reason
    p_a = wire_probability(fake.url, "Soft-A", "yes")
    p_b = wire_probability(fake.url, "Soft-B", "no")  # answered yes, expected no
    p_c = wire_probability(fake.url, "Soft-C", "no")
    assert all(0.0 < p < 1.0 for p in (p_a, p_b, p_c))
    results = {r.id: r for r in client.results(job)}
    first, second = results["r1"], results["r2"]
    assert first.status == "scored"
    assert first.score == pytest.approx((p_a + p_b) / 2)
    assert first.tag_scores == pytest.approx({"object": p_a, "color": p_b})
    assert [q.probability for q in first.questions] == pytest.approx([p_a, p_b])
    assert [q.result for q in first.questions] == [1, 0]  # the hard answers are kept
    assert first.details["hard_score"] == pytest.approx(0.5)
    assert second.score == pytest.approx(p_c)
    assert done.mean_score == pytest.approx(((p_a + p_b) / 2 + p_c) / 2)


def test_a_judge_recorded_refusing_logprobs_is_refused_at_submit(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    image = png(tmp_path / "a.png", "red")
    rows = [{"id": "r", "prompt": "p", "image": str(image), "questions": [yes_no("q?")]}]
    with pytest.raises(DatasetError, match=r"Logprobs is not enabled for models/gemini-2\.5-flash"):
        submit_soft(client, tmp_path, rows, "gemini-2.5-flash")
    assert fake.stats()["by_status"] == {}  # nothing was sent


def test_a_refusal_at_the_first_calls_pauses_the_job_with_the_api_message(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    model = "gemini-unlisted-judge"  # not in evalq's table: sent, and refused by the API
    recorded = recorded_logprobs("400_logprobs_not_enabled")
    body = json.loads(json.dumps(recorded["body"]).replace("gemini-2.5-pro", model))
    image = png(tmp_path / "a.png", "red")
    rows = marked_rows(image, "Refuse", 8, 2)
    fake.script([{"match": "Refuse-", "status": 400, "body": body}])
    job = submit_soft(client, tmp_path, rows, model)
    paused = client.wait(job, timeout_s=120)
    assert paused.status == "paused"
    message = f"400 INVALID_ARGUMENT: Logprobs is not enabled for models/{model}"
    assert paused.pause_reason is not None and message in paused.pause_reason
    assert "stopped after a refusal from" in paused.pause_reason  # the first one pauses it
    assert paused.rows_scored == 0  # nothing was scored without its probability
    shown = evalq_stdout(worker_env(redis_server.url, fake.url), "status", job)
    assert message in " ".join(re.sub("[│┌┐└┘├┤┬┴┼─]", " ", shown).split())  # cells unwrapped
