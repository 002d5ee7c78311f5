"""The two results every metric and the tasks build when there is no verdict: an unscored unit
(with its reason, never a 0) and a row that failed as a whole; and one judge call read into a
verdict, ok or unscored, as the rating metrics and MetricBase ask."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from evalq.core.errors import JudgeError, UnparseableReply, must_propagate
from evalq.core.judge import Judge, JudgeRequest
from evalq.core.models import RowResult, UnscoredReason, Verdict


def unscored(
    index: int,
    reason: UnscoredReason,
    detail: str,
    raw: str | None = None,
    *,
    judge_model: str | None = None,
    simulated: bool = False,
) -> Verdict:
    return Verdict(
        index=index,
        status="unscored",
        reason=reason,
        detail=detail,
        raw=raw,
        judge_model=judge_model,
        simulated=simulated,
    )


def failed_row(
    row_id: str,
    line: int,
    prompt: str,
    reason: UnscoredReason,
    error: str,
    simulated: bool = False,
    *,
    candidate: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> RowResult:
    """A row that could not be evaluated at all (bad input, rubric generation failed); in a
    multi-candidate job, one candidate's cell of it. `extra`: the row's own columns when it was
    read, so a failed row still counts in its group (--group-by) and shows its human label."""
    return RowResult(
        candidate=candidate,
        id=row_id,
        line=line,
        prompt=prompt,
        status="failed",
        score=None,
        reason=reason,
        error=error,
        simulated=simulated,
        extra=dict(extra or {}),
    )


def ask_judge(
    judge: Judge,
    index: int,
    request: JudgeRequest,
    read: Callable[[str], tuple[str | None, Any]],
) -> Verdict:
    """One judge call read by ``read`` (reply text -> (answer, value)). Rate limits and spent
    daily quotas propagate for the task to reschedule or pause; every other failure, and a
    reply ``read`` cannot parse, is an unscored verdict with its reason."""
    try:
        reply = judge.generate(request)
    except JudgeError as exc:
        if must_propagate(exc):
            raise
        return unscored(index, exc.reason, exc.message, exc.raw, judge_model=judge.model)
    try:
        answer, value = read(reply.text)
    except UnparseableReply as exc:
        return unscored(
            index,
            "parse_error",
            exc.message,
            exc.raw,
            judge_model=judge.model,
            simulated=reply.simulated,
        )
    return Verdict(
        index=index,
        status="ok",
        answer=answer,
        value=value,
        judge_model=judge.model,
        raw=reply.text[:2000],
        simulated=reply.simulated,
    )
