"""`evalq jobs --since`: ages and local dates."""

from __future__ import annotations

from datetime import datetime

import pytest

from evalq.client.job_filters import SinceError, parse_since


def test_ages_count_back_from_now() -> None:
    assert parse_since("90m", now=10_000.0) == 10_000.0 - 5400
    assert parse_since("12h", now=100_000.0) == 100_000.0 - 43_200
    assert parse_since("7d", now=1e6) == 1e6 - 7 * 86_400
    assert parse_since("2w", now=2e6) == 2e6 - 14 * 86_400


def test_dates_are_local_time() -> None:
    assert parse_since("2026-11-01") == datetime(2026, 11, 1).timestamp()
    assert parse_since("2026-11-01 14:30") == datetime(2026, 11, 1, 14, 30).timestamp()


def test_anything_else_says_what_it_takes() -> None:
    with pytest.raises(SinceError, match="an age"):
        parse_since("last tuesday")
