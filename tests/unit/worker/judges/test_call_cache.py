"""The judge-call cache: what changes the key, and that only successes are cached."""

from __future__ import annotations

from typing import Any

import pytest

from evalq.core.errors import TransientJudgeError
from evalq.core.judge import JudgeReply, JudgeRequest, MediaPart
from evalq.core.reply_schemas import RubricReply, VerdictReply
from evalq.worker.judges.call_cache import CachingJudge, call_digest
from evalq.worker.settings import Settings
from evalq.worker.store import SharedEntries, Store, keys
from tests.conftest import RedisServer

IMG = MediaPart(mime_type="image/png", data=b"png-bytes")


def call_key(model: str, request: JudgeRequest) -> str:
    """Where a worker keeps the reply (Store.cached_call reads this key)."""
    return keys.call(call_digest(model, request))


def test_key_covers_everything_that_shapes_a_reply() -> None:
    base = JudgeRequest(prompt="p", media=(IMG,), schema=VerdictReply)
    variants = [
        JudgeRequest(prompt="p2", media=(IMG,), schema=VerdictReply),
        JudgeRequest(
            prompt="p",
            media=(MediaPart(mime_type="image/png", data=b"other"),),
            schema=VerdictReply,
        ),
        JudgeRequest(prompt="p", media=(IMG,), schema=RubricReply),
        JudgeRequest(prompt="p", media=(IMG,), schema=VerdictReply, temperature=0.7),
        JudgeRequest(prompt="p", media=(IMG,), schema=VerdictReply, sample=1),
        JudgeRequest(prompt="p", media=(IMG,), schema=VerdictReply, max_output_tokens=10),
    ]
    keys = {call_key("m", base)} | {call_key("m", v) for v in variants} | {call_key("m2", base)}
    assert len(keys) == len(variants) + 2
    assert call_key("m", base) == call_key(
        "m", JudgeRequest(prompt="p", media=(IMG,), schema=VerdictReply)
    )


class CountingJudge:
    model = "cache-test-model"

    def __init__(self, fail: bool = False) -> None:
        self.calls = 0
        self.fail = fail

    def generate(self, request: JudgeRequest) -> JudgeReply:
        self.calls += 1
        if self.fail:
            raise TransientJudgeError("503")
        return JudgeReply(
            text=f"reply to {request.prompt}",
            model=self.model,
            model_version="v",
            prompt_tokens=3,
            output_tokens=2,
            finish_reason="STOP",
            attempts=2,
            limiter_wait_s=1.5,
        )


def replies(redis_server: RedisServer) -> SharedEntries:
    """Replies stored as workers store them: by call digest, under evalq.worker.store.keys.call."""
    return SharedEntries(Store.from_settings(Settings(redis_url=redis_server.url)), keys.call)


def test_hits_cost_nothing_and_errors_are_not_cached(redis_server: RedisServer) -> None:
    r: Any = redis_server.client()
    cache = replies(redis_server)
    inner = CountingJudge()
    judge = CachingJudge(inner, cache, ttl_s=60)
    request = JudgeRequest(prompt="cache-test-unique-prompt")
    r.delete(call_key(inner.model, request))
    first, second = judge.generate(request), judge.generate(request)
    assert inner.calls == 1
    assert (first.cached, second.cached) == (False, True)
    assert (second.text, second.attempts, second.limiter_wait_s) == (first.text, 0, 0.0)
    assert (
        CachingJudge(inner, cache, ttl_s=60, read=False).generate(request).cached is False
    )  # --no-cache
    failing = CountingJudge(fail=True)
    other = JudgeRequest(prompt="cache-test-failing")
    r.delete(call_key(failing.model, other))
    for _ in range(2):
        with pytest.raises(TransientJudgeError):
            CachingJudge(failing, cache, ttl_s=60).generate(other)
    assert failing.calls == 2


def test_requests_differing_only_in_system_instruction_have_different_keys() -> None:
    plain = JudgeRequest(prompt="What is two and two?")
    terse = JudgeRequest(prompt="What is two and two?", system_instruction="Answer in one word.")
    thorough = JudgeRequest(prompt="What is two and two?", system_instruction="Answer in full.")
    keys = {call_key("m", r) for r in (plain, terse, thorough)}
    assert len(keys) == 3


class CutOff(CountingJudge):
    def generate(self, request: JudgeRequest) -> JudgeReply:
        reply = super().generate(request)
        return JudgeReply(**{**reply.__dict__, "finish_reason": "MAX_TOKENS"})


def test_a_reply_that_did_not_end_normally_is_not_replayed(redis_server: RedisServer) -> None:
    r: Any = redis_server.client()
    cache = replies(redis_server)
    inner = CutOff()
    request = JudgeRequest(prompt="cache-test-cut-off")
    r.delete(call_key(inner.model, request))
    for _ in range(2):
        assert CachingJudge(inner, cache, ttl_s=60).generate(request).cached is False
    assert inner.calls == 2
