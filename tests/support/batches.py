"""What the batch-mode tests share, on either service (the Gemini API's Batch API, Vertex AI's
batch prediction jobs): fast polls, a dataset, a row-by-row view of a job's scores, and what
its tokens would have cost online (a batch pays half)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalq.core.pricing import call_cost_nanos, price_for, price_table, usd
from tests.support.datasets import write_rows

# Batches are polled at once and often: the tests wait on conditions, never on the clock.
FAST_POLLS = {"EVALQ_BATCH_POLL_INITIAL_S": "0.1", "EVALQ_BATCH_POLL_MAX_S": "0.5"}


def row_scores(client: Any, job_id: str) -> dict[str, Any]:
    """Every row's status, score and questions: two runs of the same replies compare equal."""
    return {
        r.id: (r.status, r.score, [(q.question, q.status, q.reason, q.result) for q in r.questions])
        for r in client.results(job_id)
    }


def shapes(folder: Path, rows: int, *, tag: str = "") -> Path:
    """A gecko-image dataset with its own three questions per row (no rubric stage). A `tag`
    ends every question ("... (check 2) [tag]"), so tests on one stack share no cached reply
    and each still finds its rows by "(check N)"."""
    from tests.support.shapes import shapes_dataset

    path = shapes_dataset(folder, rows, own_questions=True)
    if tag:
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        for record in records:
            for question in record["questions"]:
                question["question"] += f" [{tag}]"
        write_rows(path, records)
    return path


def online_cost_usd(summary: Any, model: str = "gemini-2.5-flash") -> float:
    """What the job's tokens would cost online at `model`'s price."""
    price = price_for(model, price_table())
    assert price is not None
    return usd(
        call_cost_nanos(
            price,
            summary.prompt_tokens,
            summary.output_tokens,
            summary.thought_tokens,
            summary.cached_tokens,
        )
    )


def assert_refused_unscored_and_transient_retried(rows: dict[str, Any], summary: Any) -> None:
    """The batch of `shapes()` scripted to answer row0001's star question with a 400 and
    row0002's with one 503: the refused line is unscored (judge_error, never a score), the
    transient one went into the next batch and was scored."""
    failed = [q for q in rows["row0001"].questions if "star" in q.question]
    assert [(q.status, q.reason, q.result) for q in failed] == [("unscored", "judge_error", None)]
    assert "400" in (failed[0].detail or "")
    again = [q for q in rows["row0002"].questions if "star" in q.question]
    assert [q.status for q in again] == ["ok"]  # its 503 went into the next batch once
    assert summary.unscored_by_reason == {"judge_error": 1}
