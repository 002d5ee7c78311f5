"""The fake server's Vertex AI routes, seen through the client the worker builds with
``vertexai=True`` (evalq.worker.judges.gemini.make_client: a project, a region, a Vertex API key,
the fake as base URL) and through raw HTTP: the same judge as the Gemini API routes, in Vertex's
words, and Vertex's 429 read by the worker as a rate limit."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from google.genai import errors, types
from pydantic import SecretStr

from evalq.core.errors import RateLimited
from evalq.core.judge import JudgeRequest
from evalq.fake_gemini.logprobs import average_logprob
from evalq.fake_gemini.routes.vertex import vertex_prefix
from evalq.fake_gemini.serving import running_server
from evalq.worker.judges.gemini import GeminiJudge, make_client, map_api_error
from evalq.worker.settings import Settings
from tests.conftest import FakeGemini
from tests.support.fake_http import http, serve_module
from tests.support.recorded import recorded_error

MODEL = "gemini-2.5-flash"
BODY = {"contents": [{"role": "user", "parts": [{"text": "Is there a red circle?"}]}]}


base_url = serve_module()


@pytest.fixture
def local_fake(base_url: str) -> Iterator[FakeGemini]:
    server = FakeGemini(base_url)
    server.script([])
    server.reset()
    yield server
    server.script([])


def vertex_settings(url: str, **fields: Any) -> Settings:
    base: dict[str, Any] = {
        "use_vertexai": True,
        "vertex_project": "evalq-test",
        "vertex_location": "us-central1",
        "gemini_base_url": url,
        "vertex_api_key": SecretStr("fake-vertex-key"),
        "transient_attempts": 1,
    }
    return Settings(**{**base, **fields})


def post(url: str, path: str, body: Any = BODY) -> tuple[int, Any]:
    return http(url, path, body)


def test_the_worker_client_reaches_the_project_route_and_reads_vertex_fields(
    base_url: str, local_fake: FakeGemini
) -> None:
    client = make_client(vertex_settings(base_url))
    reply = client.models.generate_content(model=MODEL, contents="Is there a red circle?")
    assert reply.text and "[simulated judge]" in reply.text
    assert reply.create_time is not None and reply.response_id
    usage = reply.usage_metadata
    assert usage is not None and usage.traffic_type == types.TrafficType.ON_DEMAND
    assert usage.candidates_tokens_details and usage.thoughts_token_count  # 2.5 Flash thinks
    counted = client.models.count_tokens(model=MODEL, contents="Is there a red circle?")
    assert counted.total_tokens
    stats = local_fake.stats()
    assert stats["by_route"] == {"vertex": 1}  # countTokens is counted apart
    assert stats["count_tokens"] == 1


def test_a_gemini_api_key_is_never_sent_to_vertex(base_url: str) -> None:
    """Only EVALQ_VERTEX_API_KEY goes to Vertex; without it the client is on ADC."""
    gemini_key = vertex_settings(base_url, vertex_api_key=None, api_key=SecretStr("gemini-key"))
    api = make_client(gemini_key)._api_client
    assert api.api_key is None and "x-goog-api-key" not in (api._http_options.headers or {})
    api = make_client(vertex_settings(base_url))._api_client
    assert api.api_key == "fake-vertex-key" and (api.project, api.location) == (
        "evalq-test",
        "us-central1",
    )


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
def test_raw_reply_is_vertex_shaped_on_both_versions_and_in_express_mode(
    base_url: str, local_fake: FakeGemini, version: str
) -> None:
    paths = [
        f"{vertex_prefix('p', 'europe-west4', version)}/publishers/google/models/{MODEL}",
        f"/{version}/publishers/google/models/{MODEL}",  # express mode: no project
    ]
    for path in paths:
        status, body = post(base_url, path + ":generateContent")
        assert status == 200, body
        assert body["createTime"].endswith("Z") and body["responseId"]
        assert body["usageMetadata"]["trafficType"] == "ON_DEMAND"
        output = body["usageMetadata"]["candidatesTokenCount"]
        assert body["usageMetadata"]["candidatesTokensDetails"] == [
            {"modality": "TEXT", "tokenCount": output}
        ]
        (candidate,) = body["candidates"]  # its text's mean log probability, unasked
        text = candidate["content"]["parts"][0]["text"]
        assert candidate["avgLogprobs"] == average_logprob(text) < 0
    assert local_fake.stats()["by_route"] == {"vertex": 2}
    status, _ = post(base_url, f"/v1beta/models/{MODEL}:generateContent")  # the Gemini API
    assert status == 200
    assert local_fake.stats()["by_route"] == {"vertex": 2, "gemini": 1}


def test_errors_are_list_wrapped_and_a_refused_budget_is_the_same_refusal(
    base_url: str, local_fake: FakeGemini
) -> None:
    path = f"{vertex_prefix('p', 'us-central1')}/publishers/google/models/{MODEL}:generateContent"
    local_fake.script([{"match": "red circle", "status": 503, "times": 1}])
    status, body = post(base_url, path)
    assert status == 503
    assert isinstance(body, list) and len(body) == 1
    assert body[0]["error"]["status"] == "UNAVAILABLE"
    thinking = {**BODY, "generationConfig": {"thinkingConfig": {"thinkingBudget": 99999}}}
    status, body = post(base_url, path, thinking)
    assert status == 400 and "thinking budget" in body[0]["error"]["message"].lower()


def test_a_quota_hit_is_vertex_429_and_the_worker_backs_off_by_its_own_delay() -> None:
    with running_server(rpm=1) as url:
        client = make_client(vertex_settings(url))
        client.models.generate_content(model=MODEL, contents="first")
        with pytest.raises(errors.ClientError) as caught:
            client.models.generate_content(model=MODEL, contents="second")
        status, raw = post(
            url, f"{vertex_prefix('p', 'l')}/publishers/google/models/{MODEL}:generateContent"
        )
    assert status == 429
    recorded = recorded_error("429_vertex_list")["body"]
    assert raw == recorded  # the fake's 429 is the recorded one, word for word
    error = map_api_error(caught.value)
    assert isinstance(error, RateLimited)
    assert error.retry_after_s == 10.0 and "no retry delay given" in str(error)


def test_recorded_bodies_replay_as_they_are_on_vertex(
    base_url: str, local_fake: FakeGemini
) -> None:
    """The recorded Vertex 429 through the worker's judge: a rate limit, whatever wraps it."""
    recorded = recorded_error("429_vertex_list")["body"]
    local_fake.script([{"match": "replay-me", "status": 429, "body": recorded}])
    path = f"{vertex_prefix('p', 'l')}/publishers/google/models/{MODEL}:generateContent"
    replay = {"contents": [{"role": "user", "parts": [{"text": "replay-me"}]}]}
    assert post(base_url, path, replay) == (429, recorded)
    judge = GeminiJudge(MODEL, vertex_settings(base_url))
    with pytest.raises(RateLimited) as caught:
        judge.generate(JudgeRequest(prompt="replay-me: is it red?"))
    assert caught.value.retry_after_s == 10.0
