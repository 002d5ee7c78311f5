"""The fake server's per-model quotas and seeded faults, through the real google-genai client."""

from __future__ import annotations

import json

import pytest
from google import genai
from google.genai import errors, types

from evalq.fake_gemini.serving import running_server
from tests.support.fake_calls import (
    MODEL,
    EchoBrain,
    ask,
    ask_json,
    detail,
    quota_id,
    retry_delay_s,
    set_script,
)
from tests.support.fake_http import http, make_client

# ---- quotas --------------------------------------------------------------------------------


def test_rpm_limits_each_model_within_a_sliding_minute() -> None:
    with running_server(brain=EchoBrain(), rpm=3) as base:
        client = make_client(base)
        outcomes: list[errors.ClientError | None] = []
        for i in range(5):
            try:
                ask(client, f"q{i}")
                outcomes.append(None)
            except errors.ClientError as exc:
                outcomes.append(exc)
        assert ask(client, model="gemini-2.5-pro").text == "echo: hello"
        stats = http(base, "/stats")[1]

    assert outcomes[:3] == [None, None, None]
    for error in outcomes[3:]:
        assert error is not None and error.code == 429
        assert quota_id(error) == "GenerateRequestsPerMinutePerProjectPerModel"
        assert 1 <= retry_delay_s(error) <= 60
        assert detail(error, "google.rpc.QuotaFailure")["violations"][0]["quotaValue"] == "3"
    assert stats["by_status"] == {"200": 4, "429": 2}
    assert stats["by_model"] == {MODEL: 5, "gemini-2.5-pro": 1}


def test_rpd_limit_uses_the_day_quota_id() -> None:
    with running_server(brain=EchoBrain(), rpd=2) as base:
        client = make_client(base)
        ask(client)
        ask(client)
        with pytest.raises(errors.ClientError) as caught:
            ask(client)
    assert caught.value.code == 429
    assert quota_id(caught.value) == "GenerateRequestsPerDayPerProjectPerModel"


def test_reset_clears_counters_quota_windows_and_rule_counts() -> None:
    rules = [{"match": "once", "reply": "scripted", "times": 1}]
    with running_server(brain=EchoBrain(), rpm=1) as base:
        set_script(base, rules)
        client = make_client(base)
        assert ask(client, "once").text == "scripted"
        with pytest.raises(errors.ClientError):
            ask(client, "once")
        assert http(base, "/stats")[1]["requests"] == 2

        assert http(base, "/reset", {}) == (200, {"reset": True})
        stats = http(base, "/stats")[1]
        assert stats["requests"] == 0
        assert stats["events"] == []
        assert stats["by_status"] == {}
        assert stats["script_rules_fired"] == {"0": 0}
        assert ask(client, "once").text == "scripted"


# ---- faults --------------------------------------------------------------------------------


def classify(client: genai.Client) -> str:
    """What the client saw, named like the server's fault counters."""
    try:
        response = ask_json(client)
    except errors.APIError as exc:
        return str(exc.code)
    assert response.candidates is not None
    if response.candidates[0].finish_reason == types.FinishReason.MAX_TOKENS:
        return "max_tokens"
    try:
        json.loads(response.text or "")
    except ValueError:
        return "malformed"
    return "slow"  # slow_fault_ms=0 makes a slow fault look like a normal reply


def test_fault_rate_one_gives_only_faults_deterministically() -> None:
    with running_server(brain=EchoBrain(), fault_rate=1.0, seed=3, slow_fault_ms=0) as base:
        client = make_client(base)
        seen = [classify(client) for _ in range(25)]
        stats = http(base, "/stats")[1]
        http(base, "/reset", {})
        again = [classify(client) for _ in range(25)]

    assert again == seen
    assert stats["requests"] == 25
    assert all(event["fault"] is not None for event in stats["events"])
    assert sum(stats["faults"].values()) == 25
    assert stats["faults"] == {name: seen.count(name) for name in stats["faults"]}
    assert set(seen) == {"429", "503", "slow", "malformed", "max_tokens"}


def test_fault_429_has_a_one_second_retry_delay() -> None:
    with running_server(brain=EchoBrain(), fault_rate=1.0, seed=0, slow_fault_ms=0) as base:
        client = make_client(base)
        for _ in range(40):
            try:
                ask(client)
            except errors.ClientError as exc:
                assert exc.code == 429
                assert detail(exc, "google.rpc.RetryInfo")["retryDelay"] == "1s"
                return
            except errors.ServerError:
                continue
    pytest.fail("no 429 fault in 40 requests")
