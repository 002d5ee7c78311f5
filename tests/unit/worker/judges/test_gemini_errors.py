"""Real Gemini and Vertex error bodies (tests/fixtures/gemini_errors, each naming where it was
published) replayed by the fake server over HTTP to evalq's Gemini judge on the real
google-genai client: each states what evalq does with it."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from google.genai import errors as genai_errors

from evalq.core.errors import BadRequest, QuotaExhausted, RateLimited, TransientJudgeError
from evalq.core.judge import JudgeRequest
from evalq.worker.judges.gemini import GeminiJudge, map_api_error
from evalq.worker.settings import Settings
from tests.conftest import FakeGemini
from tests.support.fake_http import serve_module
from tests.support.recorded import recorded_error, recorded_error_names

MODEL = "gemini-2.5-flash"


base_url = serve_module()


def replay(url: str, name: str, times: int | None = None) -> None:
    data = recorded_error(name)
    rule: dict[str, Any] = {"match": "replay-me", "status": data["status"], "body": data["body"]}
    if times is not None:
        rule["times"] = times
    FakeGemini(url).script([rule])


@functools.cache
def replay_judge(url: str, attempts: int = 3) -> GeminiJudge:
    """One judge (one SDK client) per server and attempt count: clients are slow to build."""
    settings = Settings(
        gemini_base_url=url, api_key=None, transient_attempts=attempts, transient_max_wait_s=0.05
    )
    return GeminiJudge(MODEL, settings)


def ask_replayed(judge: GeminiJudge) -> Any:
    return judge.generate(JudgeRequest(prompt="replay-me: is it red?"))


def test_every_fixture_is_one_of_the_cases_below_with_what_evalq_does_with_it() -> None:
    assert set(recorded_error_names()) == {
        "429_retryinfo_per_minute",
        "429_per_day",
        "429_help_only",
        "429_no_details",
        "429_vertex_list",
        "400_thinking_budget",
        "400_bad_schema",
        "400_api_key_invalid",
        "403_leaked_key",
        "500_internal",
        "503_overloaded",
        "504_deadline",
    }
    for name in recorded_error_names():
        assert recorded_error(name)["evalq"] in {
            "retry_after",
            "pause_for_day",
            "capped_retry",
            "unscored_fatal",
            "retried_in_process",
        }


def test_the_client_sees_the_replayed_body_as_sent(base_url: str) -> None:
    """The raw body and status reach google-genai unchanged, Vertex's list form included."""
    replay(base_url, "429_vertex_list")
    with pytest.raises(RateLimited) as caught:
        ask_replayed(replay_judge(base_url))
    assert "Resource exhausted. Please try again later." in caught.value.message
    assert caught.value.message.startswith("429 RESOURCE_EXHAUSTED")


def test_429_with_retry_info_is_retried_after_the_fractional_delay(base_url: str) -> None:
    replay(base_url, "429_retryinfo_per_minute")
    with pytest.raises(RateLimited) as caught:
        ask_replayed(replay_judge(base_url))
    assert caught.value.retry == "countdown"
    assert caught.value.retry_after_s == pytest.approx(47.432)
    assert caught.value.cost.attempts == 1  # a 429 goes back to the task, never retried in-process


def test_429_per_day_pauses_the_job(base_url: str) -> None:
    replay(base_url, "429_per_day")
    with pytest.raises(QuotaExhausted) as caught:
        ask_replayed(replay_judge(base_url))
    assert caught.value.retry == "pause"
    assert caught.value.reason == "quota_exhausted"
    assert "daily quota exhausted" in caught.value.message


@pytest.mark.parametrize("name", ["429_help_only", "429_no_details", "429_vertex_list"])
def test_429_that_says_nothing_is_retried_within_the_total_cap(base_url: str, name: str) -> None:
    """No RetryInfo and no quota id: retried after a default delay, and the message says so;
    the total time in such retries is capped per unit
    (tests/integration/metrics/test_pipeline_errors.py)."""
    replay(base_url, name)
    with pytest.raises(RateLimited) as caught:
        ask_replayed(replay_judge(base_url))
    assert caught.value.retry_after_s == 10.0
    assert "no retry delay given" in caught.value.message


@pytest.mark.parametrize(
    "name", ["400_thinking_budget", "400_bad_schema", "400_api_key_invalid", "403_leaked_key"]
)
def test_refusals_are_not_retried_and_become_unscored_judge_errors(
    base_url: str, name: str
) -> None:
    """A 4xx fails fast: one attempt, reason judge_error; repeated, it stops the job
    (tests/integration/metrics/test_pipeline_errors.py)."""
    replay(base_url, name)
    with pytest.raises(BadRequest) as caught:
        ask_replayed(replay_judge(base_url))
    body = recorded_error(name)["body"]
    assert caught.value.retry == "never"
    assert caught.value.reason == "judge_error"
    assert caught.value.cost.attempts == 1
    assert body["error"]["message"] in caught.value.message
    assert caught.value.message.startswith(
        f"{recorded_error(name)['status']} {body['error']['status']}"
    )


@pytest.mark.parametrize("name", ["500_internal", "503_overloaded", "504_deadline"])
def test_server_errors_are_retried_in_process(base_url: str, name: str) -> None:
    replay(base_url, name, times=1)
    reply = ask_replayed(replay_judge(base_url))
    assert reply.attempts == 2
    assert reply.text


@pytest.mark.parametrize("name", ["500_internal", "503_overloaded", "504_deadline"])
def test_server_errors_that_persist_end_as_judge_errors(base_url: str, name: str) -> None:
    replay(base_url, name)
    with pytest.raises(TransientJudgeError) as caught:
        ask_replayed(replay_judge(base_url, attempts=2))
    assert caught.value.cost.attempts == 2
    assert caught.value.reason == "judge_error"


def test_a_longer_list_wrapped_body_is_read_too() -> None:
    """The SDK unwraps a one-element list; a longer one reaches map_api_error as a list."""
    per_day = recorded_error("429_per_day")["body"]
    exc = genai_errors.APIError(429, [per_day, {"error": {"code": 429}}])
    assert isinstance(map_api_error(exc), QuotaExhausted)


def test_the_message_delay_is_used_when_retry_info_is_missing() -> None:
    body = recorded_error("429_retryinfo_per_minute")["body"]
    body["error"]["details"] = [
        d for d in body["error"]["details"] if "RetryInfo" not in d["@type"]
    ]
    error = map_api_error(genai_errors.APIError(429, body))
    assert isinstance(error, RateLimited)
    assert error.retry_after_s == pytest.approx(47.434392449)
