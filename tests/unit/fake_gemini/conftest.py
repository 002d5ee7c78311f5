"""What the Batch API tests share: a fake server whose brain answers each request with its text
upper-cased (so a reply shows which request it answers), and a google-genai client on it with
the script, the realism switches, the counters and the batch delay reset before each test."""

from __future__ import annotations

import pytest
from google import genai

from fake_gemini.protocol import FakeRequest
from tests.support.fake_http import reset_server, serve_module


class UpperBrain:
    def reply(self, request: FakeRequest) -> str:
        return request.user_text.upper()


base_url = serve_module(UpperBrain())


@pytest.fixture
def client(base_url: str) -> genai.Client:
    return reset_server(base_url, batches=True)
