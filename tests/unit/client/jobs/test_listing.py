"""A list of jobs: where it starts (`evalq jobs --since`: ages and local dates), and a dataset
in it shows as much of its path as tells it apart from the others listed, and no more."""

from __future__ import annotations

from datetime import datetime

import pytest

from evalq.client.jobs.listing import SinceError, parse_since, short_paths


def test_a_file_name_alone_when_it_is_unique() -> None:
    assert short_paths(["/data/a/x.jsonl", "/data/b/y.csv"]) == {
        "/data/a/x.jsonl": "x.jsonl",
        "/data/b/y.csv": "y.csv",
    }


def test_as_many_folders_as_tell_two_files_of_one_name_apart() -> None:
    paths = [
        "/home/me/a/pairwise.jsonl",
        "/home/me/b/pairwise.jsonl",
        "/x/run/v1/pairwise.jsonl",
        "/y/run/v1/pairwise.jsonl",
        "/home/me/a/other.csv",
    ]
    assert short_paths(paths) == {
        "/home/me/a/pairwise.jsonl": "a/pairwise.jsonl",
        "/home/me/b/pairwise.jsonl": "b/pairwise.jsonl",
        "/x/run/v1/pairwise.jsonl": "x/run/v1/pairwise.jsonl",
        "/y/run/v1/pairwise.jsonl": "y/run/v1/pairwise.jsonl",
        "/home/me/a/other.csv": "other.csv",
    }


def test_one_path_twice_is_one_dataset_and_a_path_that_ends_another_is_shown_whole() -> None:
    assert short_paths(["/d/x.jsonl", "/d/x.jsonl", "", "/e/d/x.jsonl"]) == {
        "/d/x.jsonl": "/d/x.jsonl",
        "/e/d/x.jsonl": "e/d/x.jsonl",
    }


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
