"""Batch mode's pure parts: the JSONL line a request becomes (read back by the fake server's
parser, as the real API would read it), the collector's switch from inline to a file, the
ledger's records and poll interval."""

from __future__ import annotations

import base64
import json
from typing import Literal

from google import genai
from google.genai import types
from pydantic import BaseModel

from evalq.core.judge import JudgeRequest, MediaPart, Thinking
from fake_gemini.rest import parse_generate_request
from worker.batch.judge import Collector
from worker.batch.ledger import BatchRecord, by_state, next_poll_s
from worker.batch.wire import describe, error_result, file_line, inlined_request, retryable

PNG = b"\x89PNG\r\n\x1a\nfake"


class Answer(BaseModel):
    explanation: str
    answer: Literal["yes", "no"]


def client() -> genai.Client:
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
        file_line(client(), inlined_request("gemini-2.5-flash", request(), 512, "k1"))
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


def test_the_collector_sends_inline_until_the_limit_then_a_file() -> None:
    small = Collector(client(), 512, inline_max_bytes=10_000_000)
    big = Collector(client(), 512, inline_max_bytes=500)
    try:
        for collector in (small, big):
            collector.want("1", "m", "d1", request("one"))
            collector.want("2", "m", "d1", request("one"))  # the same call: asked once
            collector.want("2", "m", "d2", request("two"))
            collector.finish()
        (group,) = small.groups.values()
        assert group.units == ["1\td1", "2\td2"] and small.requests == 2
        assert group.inline is not None and len(group.inline) == 2
        (file_group,) = big.groups.values()
        assert file_group.inline is None  # over the limit: the JSONL file goes instead
        lines = file_group.path.read_text().splitlines()
        assert [json.loads(x)["key"] for x in lines] == ["d1", "d2"]
    finally:
        small.cleanup()
        big.cleanup()


def test_request_errors_say_what_failed_and_which_are_worth_another_batch() -> None:
    unavailable = error_result({"code": 503, "status": "UNAVAILABLE", "message": "busy"})
    refused = error_result({"code": 400, "status": "INVALID_ARGUMENT", "message": "bad"})
    assert retryable(unavailable) and not retryable(refused)
    assert describe(refused) == "400 INVALID_ARGUMENT: bad"


def test_ledger_records_and_the_backing_off_poll_interval() -> None:
    record = BatchRecord(
        id="r1-0", round=1, model="m", display_name="evalq-j-r1-0", source="inline", requests=3
    )
    assert not record.finished and record.age_s() is None
    assert record.model_copy(update={"state": "EXPIRED"}).finished
    assert record.model_copy(update={"state": "ABANDONED"}).finished
    assert record.model_copy(update={"state": "SUCCEEDED", "ingested": True}).finished
    assert not record.model_copy(update={"state": "SUCCEEDED"}).finished
    assert by_state([record, record.model_copy(update={"ingested": True})]) == {
        "SUBMITTING": 1,
        "INGESTED": 1,
    }
    intervals = [10.0]
    for _ in range(12):
        intervals.append(next_poll_s(intervals[-1], 300.0))
    assert intervals[1] == 15.0 and intervals[-1] == 300.0
    assert intervals == sorted(intervals)
