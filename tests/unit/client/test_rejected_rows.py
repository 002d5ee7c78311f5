"""A line refused at load keeps its --group-by value and its human label: it counts in its own
group, not under "(no value)". Loaded from a real file, stored in a real Redis, grouped as the
summary groups it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalq.client.submit import rejected_rows
from evalq.core.dataset import load_dataset
from evalq.core.groups import NO_VALUE, group_summaries
from evalq.core.models import JobConfig
from evalq.worker.store import Store


def write(folder: Path, rows: list[Any]) -> Path:
    path = folder / "rated.jsonl"
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


ROWS: list[Any] = [
    {"id": "a", "prompt": "p", "response": "r", "category": "animals", "stars": 4},
    {"id": "b", "prompt": "q", "response": {"not": "text"}, "category": "animals", "stars": 2},
    {"id": "c", "prompt": "p", "response": [1], "category": "text", "note": "x" * 500},
    "{not json",
]
OPTIONS = {"template": "fluency", "human": "stars"}


def test_a_refused_record_keeps_its_short_plain_columns(tmp_path: Path) -> None:
    loaded = load_dataset(write(tmp_path, ROWS), "pointwise", OPTIONS)
    assert [line for line, _ in loaded.errors] == [2, 3, 4]
    assert loaded.rejected_columns[2] == {
        "id": "b",
        "prompt": "q",
        "category": "animals",
        "stars": 2,
    }
    assert "note" not in loaded.rejected_columns[3]  # 500 characters: not a group's name
    assert 4 not in loaded.rejected_columns  # no JSON object, no columns


def test_refused_lines_count_in_their_groups_in_the_store(tmp_path: Path, store: Store) -> None:
    loaded = load_dataset(write(tmp_path, ROWS), "pointwise", OPTIONS)
    config = JobConfig(
        job_id="rejected1", metric="pointwise", judge_model="m", dataset="d",
        rows_total=loaded.total, created_at=0, options=OPTIONS, group_by=["category"],
    )  # fmt: skip
    failed = rejected_rows(config, loaded)
    assert [r.extra for r in failed] == [
        {"category": "animals", "stars": 2},
        {"category": "text"},
        {},
    ]
    store.create_job(config, loaded.rows, failed)
    results = list(store.iter_results(config.job_id))
    groups = {g.value: (g.rows, g.rows_scored) for g in group_summaries(results, ["category"])}
    assert groups == {"animals": (1, 0), "text": (1, 0), NO_VALUE: (1, 0)}
