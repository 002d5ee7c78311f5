"""The fake Gemini server, driven over real HTTP by the real google-genai client."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from google import genai
from google.genai import errors, types

from devtools.local import ROOT
from evalq.core.judge import SIMULATED_MODEL_VERSION
from evalq.fake_gemini.protocol import SCRIPTED_MODEL_VERSION, FakeMedia
from evalq.fake_gemini.serving import running_server
from tests.support.fake_calls import (
    MODEL,
    EchoBrain,
    FailingBrain,
    Verdict,
    ask,
    detail,
    quota_id,
    set_script,
)
from tests.support.fake_http import http, make_client, reset_server, serve_module

BRAIN = EchoBrain()


# ---- fixtures ------------------------------------------------------------------------------


base_url = serve_module(BRAIN)


@pytest.fixture
def echo_url(base_url: str) -> str:
    """The shared server, with no script rules and fresh counters."""
    reset_server(base_url)
    BRAIN.requests.clear()
    return base_url


@pytest.fixture
def echo_client(echo_url: str) -> genai.Client:
    return make_client(echo_url)


def test_structured_reply_is_parsed_by_the_client(echo_client: genai.Client) -> None:
    config = types.GenerateContentConfig(
        system_instruction="You are a judge.",
        response_mime_type="application/json",
        response_schema=Verdict,
        temperature=0.0,
        max_output_tokens=256,
        # 2.5 Flash thinks by default, and 256 tokens of thought would leave no answer.
        thinking_config=types.ThinkingConfig(thinking_budget=0),
    )
    image = types.Part.from_bytes(data=b"\x89PNG fake", mime_type="image/png")
    contents: list[types.PartUnionDict] = [image, "Is it red?"]
    response = echo_client.models.generate_content(model=MODEL, contents=contents, config=config)

    assert response.parsed == Verdict(explanation="saw 1 media", answer="yes")
    assert response.model_version == SIMULATED_MODEL_VERSION
    assert response.candidates is not None
    assert response.candidates[0].finish_reason == types.FinishReason.STOP
    usage = response.usage_metadata
    assert usage is not None and usage.prompt_token_count is not None
    assert usage.prompt_token_count >= 258
    assert usage.candidates_token_count is not None and usage.candidates_token_count >= 1
    assert usage.total_token_count == usage.prompt_token_count + usage.candidates_token_count

    (seen,) = BRAIN.requests
    assert seen.model == MODEL
    assert seen.text == "You are a judge.\nIs it red?"
    assert seen.media == [FakeMedia(mime_type="image/png", data=b"\x89PNG fake")]
    assert seen.response_schema is not None
    assert seen.response_schema["required"] == ["explanation", "answer"]
    assert seen.temperature == 0.0
    assert seen.max_output_tokens == 256


def test_response_json_schema_reaches_the_brain(echo_client: genai.Client) -> None:
    config = types.GenerateContentConfig(
        response_mime_type="application/json", response_json_schema=Verdict.model_json_schema()
    )
    response = echo_client.models.generate_content(model=MODEL, contents="judge", config=config)
    assert json.loads(response.text or "")["answer"] == "yes"
    schema = BRAIN.requests[0].response_schema
    assert schema is not None and schema["type"] == "object"


def test_file_data_parts_become_media_references(echo_client: genai.Client) -> None:
    part = types.Part.from_uri(file_uri="gs://bucket/clip.mp4", mime_type="video/mp4")
    contents: list[types.PartUnionDict] = [part, "describe"]
    echo_client.models.generate_content(model=MODEL, contents=contents)
    assert BRAIN.requests[0].media == [FakeMedia(mime_type="video/mp4", uri="gs://bucket/clip.mp4")]


@pytest.mark.parametrize("api_version", ["v1", "v1beta"])
def test_both_api_versions_are_served(echo_url: str, api_version: str) -> None:
    response = ask(make_client(echo_url, api_version), "ping")
    assert response.text == "echo: ping"
    assert http(echo_url, "/stats")[1]["by_status"] == {"200": 1}


def test_async_client_and_latency_with_concurrent_requests() -> None:
    async def ask_many(client: genai.Client) -> list[str | None]:
        calls = [
            client.aio.models.generate_content(model=MODEL, contents=f"q{i}") for i in range(4)
        ]
        return [response.text for response in await asyncio.gather(*calls)]

    with running_server(brain=EchoBrain(), latency_ms=50) as base:
        texts = asyncio.run(ask_many(make_client(base)))
        stats = http(base, "/stats")[1]
    assert texts == [f"echo: q{i}" for i in range(4)]
    assert stats["in_flight"] == 0
    assert 1 <= stats["in_flight_peak"] <= 4


def test_a_latency_change_reaches_requests_already_waiting() -> None:
    """Held by an hour's latency, three calls are all open; POST /latency 0 answers them."""
    with running_server(brain=EchoBrain(), latency_ms=3_600_000) as base:
        client = make_client(base)
        texts: list[str | None] = []
        threads = [
            threading.Thread(target=lambda i=i: texts.append(ask(client, f"q{i}").text))
            for i in range(3)
        ]
        for thread in threads:
            thread.start()
        while http(base, "/stats")[1]["in_flight"] < 3:
            assert all(thread.is_alive() for thread in threads)  # none answered yet
            time.sleep(0.01)
        assert http(base, "/latency", {"latency_ms": -1})[0] == 400
        assert http(base, "/latency", {"latency_ms": 0}) == (200, {"latency_ms": 0.0})
        for thread in threads:
            thread.join(timeout=30)
        stats = http(base, "/stats")[1]
    assert sorted(texts) == [f"echo: q{i}" for i in range(3)]
    assert stats["in_flight"] == 0
    assert stats["in_flight_peak"] == 3


def test_in_flight_peak_is_the_most_requests_open_at_once() -> None:
    from evalq.fake_gemini.quotas import Stats

    stats = Stats()
    for _ in range(3):
        stats.arrived()
    stats.left()
    stats.left()
    stats.arrived()
    assert (stats.in_flight, stats.in_flight_peak) == (2, 3)
    stats.reset()  # the two still open are the new baseline
    assert stats.snapshot({})["in_flight_peak"] == 2
    stats.left()
    stats.left()
    assert stats.snapshot({})["in_flight"] == 0


def test_brain_failure_is_a_500(echo_url: str) -> None:
    with running_server(brain=FailingBrain()) as base, pytest.raises(errors.ServerError) as caught:
        ask(make_client(base))
    assert caught.value.code == 500
    assert caught.value.status == "INTERNAL"


# ---- script rules --------------------------------------------------------------------------


def test_scripted_reply_wins_and_unmatched_text_reaches_the_brain(
    echo_url: str, echo_client: genai.Client
) -> None:
    set_script(echo_url, [{"match": r"capital\s+of\s+France", "reply": "Paris"}])
    scripted = ask(echo_client, "What is the capital of\nFrance?")
    assert scripted.text == "Paris"
    assert scripted.model_version == SCRIPTED_MODEL_VERSION
    assert ask(echo_client, "something else").text == "echo: something else"

    stats = http(echo_url, "/stats")[1]
    assert stats["script_rules_fired"] == {"0": 1}
    assert [event["rule"] for event in stats["events"]] == [0, None]


def test_scripted_429_reaches_the_client_with_quota_details(
    echo_url: str, echo_client: genai.Client
) -> None:
    set_script(echo_url, [{"match": "slow down", "status": 429, "retry_delay_s": 7}])
    with pytest.raises(errors.ClientError) as caught:
        ask(echo_client, "please slow down")
    error = caught.value
    assert error.code == 429
    assert error.status == "RESOURCE_EXHAUSTED"
    assert error.message is not None and error.message.startswith("You exceeded your current quota")
    assert detail(error, "google.rpc.RetryInfo")["retryDelay"] == "7s"
    violation = detail(error, "google.rpc.QuotaFailure")["violations"][0]
    assert violation["quotaId"] == "GenerateRequestsPerMinutePerProjectPerModel"
    assert violation["quotaDimensions"] == {"model": MODEL, "location": "global"}
    assert detail(error, "google.rpc.Help")["links"]


def test_scripted_day_quota_429(echo_url: str, echo_client: genai.Client) -> None:
    set_script(echo_url, [{"match": ".", "status": 429, "quota": "day"}])
    with pytest.raises(errors.ClientError) as caught:
        ask(echo_client)
    assert quota_id(caught.value) == "GenerateRequestsPerDayPerProjectPerModel"


def test_rule_times_limit(echo_url: str, echo_client: genai.Client) -> None:
    set_script(echo_url, [{"match": "flaky", "status": 503, "times": 2}])
    for _ in range(2):
        with pytest.raises(errors.ServerError):
            ask(echo_client, "flaky call")
    assert ask(echo_client, "flaky call").text == "echo: flaky call"
    assert http(echo_url, "/stats")[1]["script_rules_fired"] == {"0": 2}


@pytest.mark.parametrize(
    ("status", "error_class", "status_name"),
    [
        (503, errors.ServerError, "UNAVAILABLE"),
        (500, errors.ServerError, "INTERNAL"),
        (400, errors.ClientError, "INVALID_ARGUMENT"),
    ],
)
def test_scripted_errors(
    echo_url: str,
    echo_client: genai.Client,
    status: int,
    error_class: type[errors.APIError],
    status_name: str,
) -> None:
    set_script(echo_url, [{"match": "boom", "status": status}])
    with pytest.raises(error_class) as caught:
        ask(echo_client, "boom")
    assert caught.value.code == status
    assert caught.value.status == status_name
    assert caught.value.details == {
        "error": {"code": status, "message": caught.value.message, "status": status_name}
    }
    if status == 503:
        assert caught.value.message == "The model is overloaded. Please try again later."


def test_safety_finish_has_no_text(echo_url: str, echo_client: genai.Client) -> None:
    set_script(echo_url, [{"match": "unsafe", "finish_reason": "SAFETY"}])
    response = ask(echo_client, "something unsafe")
    assert response.text is None
    assert response.candidates is not None
    candidate = response.candidates[0]
    assert candidate.finish_reason == types.FinishReason.SAFETY
    assert candidate.content is None
    assert any(rating.blocked for rating in candidate.safety_ratings or [])


def test_block_reason_has_no_candidates(echo_url: str, echo_client: genai.Client) -> None:
    set_script(echo_url, [{"match": "forbidden", "block_reason": "SAFETY"}])
    response = ask(echo_client, "forbidden prompt")
    assert response.candidates is None
    assert response.text is None
    assert response.prompt_feedback is not None
    assert response.prompt_feedback.block_reason == types.BlockedReason.SAFETY


def test_max_tokens_truncates_rule_and_brain_replies(
    echo_url: str, echo_client: genai.Client
) -> None:
    set_script(
        echo_url,
        [
            {"match": "scripted", "reply": "abcdefgh", "finish_reason": "MAX_TOKENS"},
            {"match": "brain", "finish_reason": "MAX_TOKENS"},
        ],
    )
    response = ask(echo_client, "scripted")
    assert response.text == "abcd"
    assert response.candidates is not None
    assert response.candidates[0].finish_reason == types.FinishReason.MAX_TOKENS
    full = "echo: brain text!"
    brain_response = ask(echo_client, "brain text!")
    assert brain_response.text == full[: len(full) // 2]
    assert brain_response.model_version == SIMULATED_MODEL_VERSION


def test_post_script_rejects_bad_rules_naming_the_rule(echo_url: str) -> None:
    status, body = http(echo_url, "/script", [{"match": "ok", "reply": "x"}, {"match": "("}])
    assert status == 400
    assert body["error"]["status"] == "INVALID_ARGUMENT"
    assert "rule 1" in body["error"]["message"]


# ---- plumbing ------------------------------------------------------------------------------


def test_healthz_and_stats_shape(echo_url: str, echo_client: genai.Client) -> None:
    assert http(echo_url, "/healthz") == (200, "ok")
    ask(echo_client)
    stats = http(echo_url, "/stats")[1]
    assert set(stats) == {
        "requests",
        "by_status",
        "by_model",
        "by_route",
        "faults",
        "script_rules_fired",
        "events",
        "count_tokens",
        "batches",
        "in_flight",
        "in_flight_peak",
        "started",
    }
    assert stats["started"] == stats["requests"] == 1  # begun, and answered
    assert stats["by_route"] == {"gemini": 1}
    assert stats["batches"] == {
        "created": 0,
        "requests": 0,
        "ended": {},
        "output_missing_gets": 0,
        "realism": {},
    }
    assert stats["faults"] == {"429": 0, "503": 0, "slow": 0, "malformed": 0, "max_tokens": 0}
    (event,) = stats["events"]
    assert event["status"] == 200 and event["model"] == MODEL
    assert event["rule"] is None and event["fault"] is None
    assert isinstance(event["t"], float)


def test_count_tokens_counts_as_usage_does_and_is_no_generate_call(
    echo_url: str, echo_client: genai.Client
) -> None:
    """countTokens through the real client: the count a reply's usage would bill for the same
    text, counted apart from generate calls (a dry run's count_tokens makes no generate call)."""
    text = "How many tokens is this prompt, counted the way the fake bills it?"
    counted = echo_client.models.count_tokens(model=MODEL, contents=text)
    billed = ask(echo_client, text).usage_metadata
    assert billed is not None and counted.total_tokens == billed.prompt_token_count
    stats = http(echo_url, "/stats")[1]
    assert stats["count_tokens"] == 1 and stats["requests"] == 1
    assert http(echo_url, "/v1beta/models/x:countTokens", {"contents": []})[0] == 400


@pytest.mark.parametrize(
    "path",
    ["/nope", "/v2/models/x:generateContent", "/v1beta/models/x:embedContent", "/v1/models/x"],
)
def test_unknown_paths_get_a_gemini_shaped_404(echo_url: str, path: str) -> None:
    status, body = http(echo_url, path, {"contents": []})
    assert status == 404
    assert body["error"]["code"] == 404
    assert body["error"]["status"] == "NOT_FOUND"


@pytest.mark.parametrize(
    "raw",
    [
        b"{not json",
        b"[1, 2]",
        b'{"contents": []}',
        b'{"contents": [{"parts": [{"inlineData": {"mimeType": "image/png", "data": "%%%"}}]}]}',
    ],
)
def test_bad_request_bodies_are_400(echo_url: str, raw: bytes) -> None:
    status, body = http(echo_url, f"/v1beta/models/{MODEL}:generateContent", raw=raw)
    assert status == 400
    assert body["error"]["status"] == "INVALID_ARGUMENT"
    assert http(echo_url, "/stats")[1]["by_status"] == {"400": 1}


def test_api_key_is_never_logged_or_stored(echo_url: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    secret = "SECRET-KEY-123"
    payload = {"contents": [{"parts": [{"text": "hi"}]}]}
    status, _ = http(echo_url, f"/v1beta/models/{MODEL}:generateContent?key={secret}", payload)
    assert status == 200
    # Keep the client referenced: a collected genai.Client closes its transport mid-call.
    client = genai.Client(api_key=secret, http_options=types.HttpOptions(base_url=echo_url))
    client.models.generate_content(model=MODEL, contents="hi")
    assert secret not in caplog.text
    assert secret not in json.dumps(http(echo_url, "/stats")[1])


def test_cli_prints_the_ready_line_and_serves(tmp_path: Path) -> None:
    """Runs the real default brain if it is there; a script answers so it is never asked."""
    pytest.importorskip("evalq.fake_gemini.brain")
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"match": ".", "reply": "from the script"}) + "\n")
    command = [sys.executable, "-m", "evalq.fake_gemini", "--port", "0", "--script", str(script)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
            prefix, suffix = "fake-gemini listening on ", " (simulated judge)"
            assert line.startswith(prefix) and line.endswith(suffix), line
            base = line.removeprefix(prefix).removesuffix(suffix)
            assert ask(make_client(base)).text == "from the script"
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    assert proc.returncode == 0
