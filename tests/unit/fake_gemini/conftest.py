"""A google-genai client on the test module's in-process fake server (its `base_url`, from
tests.support.fake_http.serve_module), with the script, the batch realism switches, the counters
and the batch delay reset before each test."""

from __future__ import annotations

import pytest
from google import genai

from tests.support.fake_http import reset_server


@pytest.fixture
def genai_client(base_url: str) -> genai.Client:
    return reset_server(base_url, batches=True)
