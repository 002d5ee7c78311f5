"""A dataset in a list of jobs shows as much of its path as tells it apart from the others
listed, and no more."""

from __future__ import annotations

from evalq.client.job_lines import short_paths


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
