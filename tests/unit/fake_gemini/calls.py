"""What the fake server's own tests share: a brain that echoes (and answers a schema with a
valid verdict), one that fails, and calls through the real client with the error details
Gemini puts on a 429."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from google import genai
from google.genai import errors, types
from pydantic import BaseModel

from fake_gemini.protocol import FakeRequest
from tests.support.fake_http import RecordingBrain, http

MODEL = "gemini-2.5-flash"
REPO = Path(__file__).resolve().parents[3]


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


# ---- fixtures ------------------------------------------------------------------------------


def set_script(url: str, rules: list[dict[str, Any]]) -> None:
    status, body = http(url, "/script", rules)
    assert status == 200, body
