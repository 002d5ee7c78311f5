"""What the fake server's own tests share: a brain that echoes (and answers a schema with a
valid verdict), one that fails, calls through the real client with the error details Gemini
puts on a 429, and a batch polled until it ends."""

from __future__ import annotations

import json
import time
from typing import Any, Literal

from google import genai
from google.genai import errors, types
from pydantic import BaseModel

from evalq.fake_gemini.protocol import FakeRequest
from tests.support.fake_http import RecordingBrain, http

MODEL = "gemini-2.5-flash"
TERMINAL = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED"}


class Verdict(BaseModel):
    explanation: str
    answer: Literal["yes", "no"]


def _echo(request: FakeRequest) -> str:
    if request.response_schema is not None:
        return json.dumps({"explanation": f"saw {len(request.media)} media", "answer": "yes"})
    return f"echo: {request.text}"


class EchoBrain(RecordingBrain):
    """Answers schema requests with a valid Verdict and remembers what it was asked."""

    def __init__(self) -> None:
        super().__init__(_echo)


class FailingBrain:
    def reply(self, request: FakeRequest) -> str:
        raise RuntimeError("brain exploded")


def ask(
    client: genai.Client, text: str = "hello", model: str = MODEL
) -> types.GenerateContentResponse:
    return client.models.generate_content(model=model, contents=text)


def ask_json(client: genai.Client, text: str = "judge this") -> types.GenerateContentResponse:
    config = types.GenerateContentConfig(
        response_mime_type="application/json", response_schema=Verdict
    )
    return client.models.generate_content(model=MODEL, contents=text, config=config)


def detail(error: errors.APIError, type_suffix: str) -> dict[str, Any]:
    assert isinstance(error.details, dict)
    for item in error.details["error"]["details"]:
        if item["@type"].endswith(type_suffix):
            return dict(item)
    raise AssertionError(f"no {type_suffix} in {error.details}")


def retry_delay_s(error: errors.APIError) -> float:
    return float(detail(error, "google.rpc.RetryInfo")["retryDelay"].removesuffix("s"))


def quota_id(error: errors.APIError) -> str:
    return str(detail(error, "google.rpc.QuotaFailure")["violations"][0]["quotaId"])


def set_script(url: str, rules: list[dict[str, Any]]) -> None:
    status, body = http(url, "/script", rules)
    assert status == 200, body


def wait_until_done(client: genai.Client, name: str) -> types.BatchJob:
    """Poll as a caller would, until the batch reaches a terminal state (a condition, with
    a generous cap only so a broken server fails the test instead of hanging it)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        job = client.batches.get(name=name)
        if job.state is not None and job.state.value in TERMINAL:
            return job
        time.sleep(0.02)
    raise AssertionError(f"{name} never finished")
