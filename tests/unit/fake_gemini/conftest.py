"""What the Batch API tests share: a fake server whose brain answers each request with its text
upper-cased (so a reply shows which request it answers), and a google-genai client on it with
the script, the realism switches, the counters and the batch delay reset before each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from google import genai

from fake_gemini.protocol import FakeRequest
from fake_gemini.serving import running_server
from tests.support.fake_http import reset_server


class UpperBrain:
    def reply(self, request: FakeRequest) -> str:
        return request.user_text.upper()


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_server(brain=UpperBrain()) as url:
        yield url


@pytest.fixture
def client(base_url: str) -> genai.Client:
    return reset_server(base_url, batches=True)
