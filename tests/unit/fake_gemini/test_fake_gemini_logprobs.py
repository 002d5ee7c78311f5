"""The fake server's log probabilities, seen through HTTP and the real google-genai client: the
wire shape of a recorded reply (avgLogprobs, logprobsResult.topCandidates/chosenCandidates of
{token, logProbability}), and the recorded 400 body for a model the Gemini API refuses them."""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from typing import Any

import pytest
from google import genai
from google.genai import errors, types

from evalq.core.reply_schemas import VerdictReply
from tests.support.fake_http import serve_module
from tests.support.recorded import recorded_logprobs

base_url = serve_module()


def generate_with(url: str, model: str, config: dict[str, Any]) -> tuple[int, Any]:
    payload = {
        "contents": [{"role": "user", "parts": [{"text": "Is there a dog? (yes or no)"}]}],
        "generationConfig": config,
    }
    request = urllib.request.Request(
        f"{url}/v1beta/models/{model}:generateContent",
        data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


SOFT = {
    "responseLogprobs": True,
    "logprobs": 5,
    "responseMimeType": "application/json",
    "responseSchema": VerdictReply.model_json_schema(),
}


def shape(value: Any) -> Any:
    """The keys and value types of a JSON value, lists by their first item."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return "number" if isinstance(value, int | float) else type(value).__name__


def test_the_wire_shape_matches_the_recorded_reply(base_url: str) -> None:
    status, body = generate_with(base_url, "gemini-2.0-flash", SOFT)
    assert status == 200
    recorded = recorded_logprobs("stop_yes_with_logprobs")["body"]["candidates"][0]
    candidate = body["candidates"][0]
    assert shape(candidate["logprobsResult"]) == shape(recorded["logprobsResult"])
    assert isinstance(candidate["avgLogprobs"], float)
    chosen = candidate["logprobsResult"]["chosenCandidates"]
    top = candidate["logprobsResult"]["topCandidates"]
    text = candidate["content"]["parts"][0]["text"]
    assert "".join(c["token"] for c in chosen) == text
    assert len(top) == len(chosen)
    assert all(len(step["candidates"]) <= 5 for step in top)
    assert candidate["avgLogprobs"] == pytest.approx(
        sum(c["logProbability"] for c in chosen) / len(chosen)
    )
    # the answer's step offers both answers, sorted by probability, the chosen one first
    answer = json.loads(text)["answer"]
    at = max(i for i, c in enumerate(chosen) if c["token"] == answer)
    offered = top[at]["candidates"]
    assert offered[0]["token"] == answer
    assert {"yes", "no"} <= {c["token"] for c in offered}
    probabilities = [math.exp(c["logProbability"]) for c in offered]
    assert probabilities == sorted(probabilities, reverse=True) and sum(probabilities) < 1


def test_no_logprobs_unless_asked(base_url: str) -> None:
    status, body = generate_with(
        base_url, "gemini-2.0-flash", {"responseMimeType": "application/json"}
    )
    assert status == 200
    assert "logprobsResult" not in body["candidates"][0]


@pytest.mark.parametrize("model", ["gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"])
def test_a_refusing_model_sends_the_recorded_400(base_url: str, model: str) -> None:
    status, body = generate_with(base_url, model, SOFT)
    recorded = recorded_logprobs("400_logprobs_not_enabled")
    assert status == recorded["status"]
    expected = json.loads(json.dumps(recorded["body"]).replace("gemini-2.5-pro", model))
    assert body == expected
    # without responseLogprobs the same model answers
    assert generate_with(base_url, model, {"responseMimeType": "application/json"})[0] == 200


def test_the_real_client_reads_the_fake_logprobs_and_its_refusal(base_url: str) -> None:
    client = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=base_url))
    config = types.GenerateContentConfig(response_logprobs=True, logprobs=3)
    reply = client.models.generate_content(model="gemini-2.0-flash", contents="hi", config=config)
    assert reply.candidates and reply.candidates[0].logprobs_result is not None
    assert reply.candidates[0].logprobs_result.chosen_candidates
    with pytest.raises(errors.ClientError) as refused:
        client.models.generate_content(model="gemini-2.5-pro", contents="hi", config=config)
    assert refused.value.code == 400 and refused.value.status == "INVALID_ARGUMENT"
    assert refused.value.message == "Logprobs is not enabled for models/gemini-2.5-pro"
