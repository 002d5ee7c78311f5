"""A job's results as the tests compare them (what two runs of the same rows must agree on),
and a Gecko question's result built by hand for the code that reads results."""

from __future__ import annotations

from typing import Any

from evalq.core.models import QuestionResult


def scores(client: Any, job_id: str) -> list[tuple[str, str, float | None]]:
    """Each row's id, status and score, by row id: a rerun served from the cache, or any other
    way of running the same rows, compares equal to the first run."""
    return sorted((r.id, r.status, r.score) for r in client.results(job_id))


def answered(
    text: str,
    result: int | None,
    *,
    tag: str = "object",
    judge: str | None = None,
    probability: float | None = None,
) -> QuestionResult:
    """A yes/no question answered as expected (`result` 1), or not (0), or left unscored as
    unparseable (None)."""
    return QuestionResult(
        question=text,
        tag=tag,
        expected="yes",
        answer=None if result is None else ("yes" if result else "no"),
        result=result,
        status="ok" if result is not None else "unscored",
        reason=None if result is not None else "parse_error",
        judge_model=judge,
        probability=probability,
    )
