"""The unknown-columns warning leaves out a column given to --group-by (it is read, by the
summary), and names the others (the part that needs workers, once per `run --wait`, is in
tests/integration/cli/test_columns.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import bare_env, run_evalq
from tests.support.datasets import write_rows


def test_a_group_by_column_is_not_an_unknown_column(scratch_url: str, tmp_path: Path) -> None:
    rows = [
        {"prompt": f"p{i}", "response": "r", "category": "a" if i % 2 else "b", "note": "n"}
        for i in range(4)
    ]
    data = write_rows(tmp_path / "d.jsonl", rows)
    env = bare_env() | {"EVALQ_REDIS_URL": scratch_url, "EVALQ_ARCHIVE_URL": "off"}
    plan = ["run", "pointwise", str(data), "--template", "fluency", "--dry-run", "--json"]

    def unknown(*flags: str) -> list[str]:
        done = run_evalq(env, *plan, *flags, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return [w for w in json.loads(done.stdout)["warnings"] if "unknown column" in w]

    tail = "in 4 of 4 rows: kept as extra, not read by the metric"
    assert unknown() == [f"unknown column(s) 'category', 'note', 'prompt' {tail}"]
    assert unknown("--group-by", "category") == [f"unknown column(s) 'note', 'prompt' {tail}"]
