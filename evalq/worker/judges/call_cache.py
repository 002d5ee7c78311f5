"""The judge-call cache: a rerun or a resumed job costs nothing it already paid for. Only whole
replies are cached: errors, and replies that did not end normally, are never replayed."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, replace

from evalq.core.judge import (
    Judge,
    JudgeReply,
    JudgeRequest,
    ReplyLogprobs,
    incomplete,
    reply_schema,
)
from evalq.core.shared_cache import KeyValue


def call_digest(model: str, request: JudgeRequest) -> str:
    """The reply's name in the cache (its key is evalq.worker.store.keys.call of it): a hash of
    everything that shapes a reply: model, system instruction, the full prompt text, response
    schema, generation config, media digests and sample index."""
    media = [
        {"mime": m.mime_type, "sha256": m.data_sha256}
        if m.data is not None
        else {"mime": m.mime_type, "uri": m.uri}
        for m in request.media
    ]
    material = {
        "model": model,
        "prompt": request.prompt,
        "schema": reply_schema(request.schema) if request.schema else None,
        "config": {
            "temperature": request.temperature,
            "max_output_tokens": request.max_output_tokens,
            "thinking": asdict(request.thinking) if request.thinking else None,
        },
        "media": media,
        "sample": request.sample,
    }
    if request.system_instruction is not None:  # absent when unset: older keys stay valid
        material["system_instruction"] = request.system_instruction
    if request.logprobs is not None:  # likewise: a reply without them must not stand in
        material["logprobs"] = request.logprobs
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


class CachingJudge:
    """`replies` holds replies by call digest (Store.call_replies: the store names their keys)."""

    def __init__(self, inner: Judge, replies: KeyValue, ttl_s: int, *, read: bool = True) -> None:
        self.model = inner.model
        self._inner = inner
        self._replies = replies
        self._ttl_s = ttl_s
        self._read = read

    def generate(self, request: JudgeRequest) -> JudgeReply:
        digest = call_digest(self.model, request)
        if self._read and (raw := self._replies.get(digest)):
            data = json.loads(raw)
            data["logprobs"] = ReplyLogprobs.from_json(data.get("logprobs"))
            return replace(JudgeReply(**data), cached=True, attempts=0, limiter_wait_s=0.0)
        reply = self._inner.generate(request)
        if incomplete(reply) is not None:
            return reply  # not replayed: a rerun (perhaps with a larger budget) asks again
        stored = {
            k: v
            for k, v in asdict(reply).items()
            if k not in ("cached", "attempts", "limiter_wait_s")
        }
        self._replies.set(digest, json.dumps(stored), self._ttl_s)
        return reply
