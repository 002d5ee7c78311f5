"""What --soft changes on the wire and in the call cache: the request asks for log
probabilities (response_logprobs, logprobs=N) only when the JudgeRequest does, a reply's
logprobsResult survives a trip through the call cache, and a reply cached without them never
stands in for a request that asks for them."""

from __future__ import annotations

from google.genai import types

from evalq.core.judge import JudgeReply, JudgeRequest
from evalq.core.reply_schemas import VerdictReply
from evalq.worker.judges.call_cache import CachingJudge, call_digest
from evalq.worker.judges.gemini import request_parts
from evalq.worker.judges.reply_reading import reply_from_response
from tests.support.memory_kv import MemoryKV
from tests.support.recorded import recorded_logprobs


def test_logprobs_are_asked_for_only_when_the_request_wants_them() -> None:
    _, plain = request_parts(JudgeRequest(prompt="p", schema=VerdictReply), 256)
    assert plain.response_logprobs is None and plain.logprobs is None
    _, soft = request_parts(JudgeRequest(prompt="p", schema=VerdictReply, logprobs=5), 256)
    assert soft.response_logprobs is True and soft.logprobs == 5


def test_a_reply_without_logprobs_reads_as_none() -> None:
    body = recorded_logprobs("stop_yes_with_logprobs")["body"]
    del body["candidates"][0]["logprobsResult"]
    reply = reply_from_response("m", types.GenerateContentResponse(**body))
    assert reply.logprobs is None


class Once:
    model = "m"

    def __init__(self, reply: JudgeReply) -> None:
        self.reply, self.calls = reply, 0

    def generate(self, request: JudgeRequest) -> JudgeReply:
        self.calls += 1
        return self.reply


def test_logprobs_survive_the_call_cache_and_are_part_of_its_key() -> None:
    body = recorded_logprobs("stop_yes_with_logprobs")["body"]
    reply = reply_from_response("m", types.GenerateContentResponse(**body))
    inner = Once(reply)
    judge = CachingJudge(inner, MemoryKV(), 60)
    soft = JudgeRequest(prompt="p", logprobs=5)
    judge.generate(soft)
    again = judge.generate(soft)
    assert inner.calls == 1 and again.cached
    assert again.logprobs == reply.logprobs
    assert call_digest("m", soft) != call_digest("m", JudgeRequest(prompt="p"))
    # keys of requests without logprobs are those evalq made before --soft existed
    assert call_digest("m", JudgeRequest(prompt="p")) == call_digest(
        "m", JudgeRequest(prompt="p", logprobs=None)
    )


def test_a_refusal_of_log_probabilities_pauses_at_once_others_after_the_limit() -> None:
    from evalq.worker.judges.fatal_errors import limit_for

    refused = "400 INVALID_ARGUMENT: Logprobs is not enabled for models/gemini-2.5-pro"
    assert limit_for(refused, 5) == 1
    assert limit_for("Logprobs is not supported for this model", 5) == 1
    assert limit_for("400 INVALID_ARGUMENT: API key not valid", 5) == 5
