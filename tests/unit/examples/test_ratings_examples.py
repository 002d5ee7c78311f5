"""The pointwise candidates example: one row per source, each model's summary in its column."""

from __future__ import annotations

import json
from pathlib import Path

from evalq.core.dataset import load_dataset
from evalq.examples.ratings import (
    POINTWISE_CANDIDATES,
    write_pointwise_candidates_example,
    write_pointwise_example,
)


def test_each_source_has_both_models_summaries(tmp_path: Path) -> None:
    path = write_pointwise_candidates_example(tmp_path)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    single = write_pointwise_example(tmp_path / "single").read_text(encoding="utf-8")
    assert len(rows) * 2 == len(single.splitlines())
    for row in rows:
        assert all(row[name].strip() for name in POINTWISE_CANDIDATES)
        assert row["faithful"] != row["poor"]
        assert "response" not in row


def test_it_loads_as_a_two_candidate_pointwise_job(tmp_path: Path) -> None:
    path = write_pointwise_candidates_example(tmp_path)
    options = {"template": "summarization_quality", "candidates": list(POINTWISE_CANDIDATES)}
    loaded = load_dataset(path, "pointwise", options)
    assert not loaded.errors
    assert {r.candidate for r in loaded.rows} == set(POINTWISE_CANDIDATES)
    assert len(loaded.rows) == 2 * len(path.read_text(encoding="utf-8").splitlines())
