"""A job's interval is one figure: `evalq status` and `evalq leaderboard` read the same rows in
their own orders and show the same interval (one function, one seed, the values sorted)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from evalq.core.counters import JobCounters
from evalq.core.models import RowResult
from evalq.core.summary import build_summary
from evalq.worker.archive.archive import Archive
from tests.integration.archive.test_archive_store import record
from tests.support.cli import bare_env, run_evalq

# Scores a BCa bootstrap resamples; twelve rows, so that ids r1..r12 sort apart from lines.
SCORES = [0.25, 1.0, 0.5, 0.75, 0.0, 1.0, 0.5, 1.0, 0.75, 0.25, 1.0, 0.5]


def varied_record(job_id: str, name: str, scores: list[float]) -> object:
    """An archived gecko-image job whose rows scored `scores`, its summary built as a worker
    builds it."""
    base = record(job_id, rows=len(scores), name=name)
    results = [
        RowResult.model_validate_json(row.result_json).model_copy(update={"score": score})
        for row, score in zip(base.rows, scores, strict=True)
    ]
    counters = JobCounters(status="finished", rows_done=len(scores), rows_scored=len(scores))
    summary = build_summary(base.config, counters, {}, results, base.ended_at)
    rows = [
        replace(row, result_json=result.model_dump_json())
        for row, result in zip(base.rows, results, strict=True)
    ]
    return replace(base, rows=rows, summary_json=summary.model_dump_json())


def test_status_and_leaderboard_show_one_interval(scratch_url: str, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'archive.sqlite'}"
    archive = Archive.at(url)
    assert archive is not None
    archive.write(varied_record("abcabcabc123", "varied", SCORES))  # type: ignore[arg-type]
    archive.write(varied_record("defdefdef456", "other", SCORES[::-1]))  # type: ignore[arg-type]
    env = bare_env() | {"EVALQ_REDIS_URL": scratch_url, "EVALQ_ARCHIVE_URL": url}

    board = run_evalq(env, "leaderboard", "varied", "other", "--json", cwd=tmp_path)
    assert board.returncode == 0, board.stderr
    standings = {s["candidate"]: s for s in json.loads(board.stdout)["candidates"]}
    for name in ("varied", "other"):
        status = run_evalq(env, "status", name, "--json", cwd=tmp_path)
        assert status.returncode == 0, status.stderr
        shown = json.loads(status.stdout)
        assert shown["ci_method"] == "bca"
        assert standings[name]["mean"] == shown["mean_score"]
        assert standings[name]["ci95"] == shown["ci95"], name
