"""Batch mode's pure parts: the JSONL line a request becomes (read back by the fake server's
parser, as the real API would read it), the collector's switch from inline to a file, the
ledger's records and poll interval."""

from __future__ import annotations

import base64
import json
from typing import Any, Literal

import pytest
from google import genai
from google.genai import types
from pydantic import BaseModel

from evalq.core.judge import JudgeRequest, MediaPart, Thinking
from evalq.fake_gemini.rest import parse_generate_request
from evalq.worker.batch.judge import Collector
from evalq.worker.batch.wire import describe, error_result, file_line, inlined_request, retryable

PNG = b"\x89PNG\r\n\x1a\nfake"


class Answer(BaseModel):
    explanation: str
    answer: Literal["yes", "no"]


def offline_client() -> genai.Client:
    return genai.Client(api_key="offline", http_options=types.HttpOptions(base_url="http://x"))


def request(prompt: str = "Is there a cat?") -> JudgeRequest:
    return JudgeRequest(
        prompt=prompt,
        system_instruction="You judge images.",
        media=(MediaPart(mime_type="image/png", data=PNG),),
        schema=Answer,
        max_output_tokens=256,
        thinking=Thinking(budget=0),
    )


def test_a_file_line_is_the_request_the_sdk_would_send_keyed_by_digest() -> None:
    line = json.loads(
        file_line(offline_client(), inlined_request("gemini-2.5-flash", request(), 512, "k1"))
    )
    assert set(line) == {"key", "request"} and line["key"] == "k1"
    body = line["request"]
    blob = body["contents"][0]["parts"][0]["inlineData"]
    assert base64.b64decode(blob["data"]) == PNG
    assert body["systemInstruction"]["parts"][0]["text"] == "You judge images."
    config = body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["maxOutputTokens"] == 256
    parsed = parse_generate_request("gemini-2.5-flash", body)
    assert parsed.wants_json
    assert parsed.request.user_text == "Is there a cat?"
    assert parsed.request.media[0].data == PNG
    assert parsed.request.thinking_budget == 0
    assert parsed.request.response_schema is not None


def test_the_collector_writes_every_request_to_a_keyed_file() -> None:
    """Always the JSONL file: its results carry each request's key back, where inlined
    responses may come back reordered and without their metadata."""
    collector = Collector(lambda inlined: file_line(offline_client(), inlined), 512)
    try:
        collector.want("1", "m", "d1", request("one"))
        collector.want("2", "m", "d1", request("one"))  # the same call: asked once
        collector.want("2", "m", "d2", request("two"))
        collector.finish()
        (group,) = collector.groups.values()
        assert group.units == ["1\td1", "2\td2"] and collector.requests == 2
        lines = group.path.read_text().splitlines()
        assert [json.loads(x)["key"] for x in lines] == ["d1", "d2"]
    finally:
        collector.cleanup()


def test_request_errors_say_what_failed_and_which_are_worth_another_batch() -> None:
    unavailable = error_result({"code": 503, "status": "UNAVAILABLE", "message": "busy"})
    refused = error_result({"code": 400, "status": "INVALID_ARGUMENT", "message": "bad"})
    assert retryable(unavailable) and not retryable(refused)
    assert describe(refused) == "400 INVALID_ARGUMENT: bad"


@pytest.mark.parametrize(
    ("error", "again", "named"),
    [
        ({"code": 13, "message": "Internal error encountered."}, True, "INTERNAL"),
        ({"code": 14, "message": "The service is currently unavailable."}, True, "UNAVAILABLE"),
        ({"code": 4, "message": "Deadline expired"}, True, "DEADLINE_EXCEEDED"),
        ({"code": 8, "message": "Resource exhausted"}, True, "RESOURCE_EXHAUSTED"),
        (
            {"code": 3, "message": "Request contains an invalid argument."},
            False,
            "INVALID_ARGUMENT",
        ),
        ({"code": 7, "message": "denied"}, False, "PERMISSION_DENIED"),
        ({"code": 500, "message": "x"}, True, "INTERNAL"),
        ({"code": 504, "message": "x"}, True, "DEADLINE_EXCEEDED"),
        ({"code": 429, "message": "x"}, True, "RESOURCE_EXHAUSTED"),
        ({"code": 404, "message": "x"}, False, "NOT_FOUND"),
    ],
)
def test_grpc_and_http_codes_mean_the_same(error: dict[str, Any], again: bool, named: str) -> None:
    """A per-request error in a batch comes as {code: <gRPC number>, message} with no status
    name (python-genai #1341, #2693): the number decides, as an HTTP code would."""
    stored = error_result(error)
    assert stored["status"] == named
    assert retryable(stored) is again
    assert describe(stored).startswith(f"{error['code']} {named}: ")


def test_details_of_any_shape_are_kept_as_text() -> None:
    details = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "X"}]
    stored = error_result({"code": 13, "message": "m", "details": details})
    assert json.loads(stored["details"]) == details
