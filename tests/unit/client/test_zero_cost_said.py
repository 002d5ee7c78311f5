"""A cost of zero says why in `evalq compare`, as `evalq status` does: no billed call (every
reply from the cache, or none needed), never a bare $0.0000."""

from __future__ import annotations

import json
from pathlib import Path

from evalq.worker.archive.archive import Archive
from tests.support.cli import bare_env, run_evalq
from tests.unit.comparisons.test_one_interval import SCORES, varied_record

WHY = "no billed call: every reply came from the cache, or none was needed"


def test_compare_says_why_a_cost_is_zero(scratch_url: str, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'archive.sqlite'}"
    archive = Archive.at(url)
    assert archive is not None
    archive.write(varied_record("abcabcabc123", "cached", SCORES))  # type: ignore[arg-type]
    archive.write(varied_record("defdefdef456", "again", SCORES[::-1]))  # type: ignore[arg-type]
    env = bare_env() | {"EVALQ_REDIS_URL": scratch_url, "EVALQ_ARCHIVE_URL": url}

    text = run_evalq(env | {"COLUMNS": "200"}, "compare", "cached", "again", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    said = [line for line in text.stdout.splitlines() if line.startswith("cached: job")]
    assert said and said[0].endswith(f"cost $0.0000 ({WHY})"), text.stdout
    status = run_evalq(env | {"COLUMNS": "250"}, "status", "cached", cwd=tmp_path).stdout
    assert f"$0 ({WHY})" in status  # the same reason status gives
    as_json = run_evalq(env, "compare", "cached", "again", "--json", cwd=tmp_path)
    assert [s["cost_note"] for s in json.loads(as_json.stdout)["sides"]] == [WHY, WHY]
