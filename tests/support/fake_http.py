"""Talking to an in-process fake Gemini server (evalq.fake_gemini.serving.running_server) in unit
tests: a brain that remembers what it was asked, the real google-genai client on the server,
plain HTTP for the routes the client has no call for, and the reset a shared server needs
between tests."""

from __future__ import annotations

import functools
import json
import os
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import certifi
import pytest
from google import genai
from google.genai import types

from evalq.fake_gemini.protocol import Brain, FakeRequest
from evalq.fake_gemini.serving import running_server


class RecordingBrain:
    """Remembers every request it is asked (from the server's threads), then answers it."""

    def __init__(self, answer: Callable[[FakeRequest], str]) -> None:
        self.requests: list[FakeRequest] = []
        self._answer = answer
        self._lock = threading.Lock()

    def reply(self, request: FakeRequest) -> str:
        with self._lock:
            self.requests.append(request)
        return self._answer(request)


class UpperBrain:
    """Answers each request with its text upper-cased, so a reply shows which request it
    answers (a batch's replies, in whatever order they come back)."""

    def reply(self, request: FakeRequest) -> str:
        return request.user_text.upper()


def user_request(text: str) -> dict[str, Any]:
    """A generateContent request body of one user turn, as the wire carries it."""
    return {"contents": [{"parts": [{"text": text}], "role": "user"}]}


def serve_module(brain: Brain | None = None) -> Callable[[], Iterator[str]]:
    """A module-scoped ``base_url`` fixture: one in-process fake server with this brain (the
    simulated judge's without one) for the test module (``base_url = serve_module(MyBrain())``)."""

    @pytest.fixture(scope="module")
    def base_url() -> Iterator[str]:
        with running_server(brain=brain) as url:
            yield url

    return base_url


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every client made here, loaded once per test process as
    google-genai loads its own: left to itself the SDK reads the CA bundle into three new ones
    per client (about 0.1 s of CPU), for clients that speak plain HTTP to a server in this
    process; the unit tests make hundreds."""
    return ssl.create_default_context(
        cafile=os.environ.get("SSL_CERT_FILE", certifi.where()),
        capath=os.environ.get("SSL_CERT_DIR"),
    )


def make_client(base_url: str, api_version: str | None = None) -> genai.Client:
    options = types.HttpOptions(
        base_url=base_url,
        api_version=api_version,
        client_args={"verify": _tls()},
        async_client_args={"verify": _tls(), "ssl": _tls()},  # httpx's, then aiohttp's
    )
    return genai.Client(api_key="test-key", http_options=options)


def http(
    base_url: str, path: str, payload: object = None, raw: bytes | None = None
) -> tuple[int, Any]:
    """POST when there is a body, GET otherwise; returns (status, parsed JSON or text)."""
    data = raw if raw is not None else None if payload is None else json.dumps(payload).encode()
    request = urllib.request.Request(
        base_url + path, data=data, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request) as response:
            status, body = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, body = exc.code, exc.read()
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body.decode()


def files_stats(base_url: str) -> dict[str, Any]:
    """The fake server's Files API counters (/stats/files): the uploads so far and the files it
    holds."""
    status, body = http(base_url, "/stats/files")
    assert status == 200, body
    return dict(body)


def reset_server(base_url: str, *, batches: bool = False) -> genai.Client:
    """No script rules and fresh counters (with ``batches``, no realism switches and no batch
    delay either); a client on the server."""
    assert http(base_url, "/script", [])[0] == 200
    if batches:
        assert http(base_url, "/batch-realism", {})[0] == 200
    assert http(base_url, "/reset", {})[0] == 200
    if batches:
        assert http(base_url, "/batch-delay", {"delay_s": 0})[0] == 200
    return make_client(base_url)
