"""Counting a dry run's text tokens with Gemini's count_tokens endpoint (`--count-tokens`): free,
but a request per distinct text; a text it can not count falls back to 4 characters a token,
and the report says which."""

from __future__ import annotations

import hashlib
import math

from google.genai import errors as genai_errors

from evalq.worker.judges.gemini import _TRANSPORT_ERRORS, make_client
from evalq.worker.settings import Settings

_FAILURES: tuple[type[BaseException], ...] = (genai_errors.APIError, *_TRANSPORT_ERRORS)


class ApiTokenCounter:
    def __init__(self, settings: Settings) -> None:
        self._client = make_client(settings)
        self._memo: dict[tuple[str, str], int] = {}
        self.requests = 0
        self.failures: list[str] = []

    @property
    def method(self) -> str:
        return f"count_tokens API ({self.requests} requests)"

    def count(self, model: str, text: str) -> int:
        key = (model, hashlib.sha256(text.encode()).hexdigest())
        if key in self._memo:
            return self._memo[key]
        self.requests += 1
        try:
            result = self._client.models.count_tokens(model=model, contents=text)
            tokens = int(result.total_tokens or 0)
        except _FAILURES as exc:
            failure = f"count_tokens for {model} failed ({type(exc).__name__}: {exc})"[:300]
            if failure not in self.failures:
                self.failures.append(failure + "; counted at 4 characters per token")
            tokens = math.ceil(len(text) / 4)
        self._memo[key] = tokens
        return tokens
