"""A job that stays running for as long as a test needs it to: the fake server holds every
judge call open (a latency no test waits out) until the test releases them."""

from __future__ import annotations

from tests.conftest import FakeGemini

HOLD_MS = 600_000


def hold(fake: FakeGemini) -> None:
    fake._call("/latency", {"latency_ms": HOLD_MS})


def release(fake: FakeGemini) -> None:
    fake._call("/latency", {"latency_ms": 0})
