"""The retry policy is declared on the error classes and read in one place (evalq.core.errors): the
judge client retries "backoff" in-process, metrics let "countdown" and "pause" through, and the
tasks switch on it. A failed call's cost is fixed when its error is made."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from evalq.core import errors
from evalq.core.errors import (
    Blocked,
    CallCost,
    JobHalted,
    JudgeError,
    LimiterBusy,
    QuotaExhausted,
    RateLimited,
    TransientJudgeError,
    TruncatedReply,
    UnparseableReply,
    must_propagate,
    policy_of,
    retried_in_process,
)
from tests.conftest import ROOT


def judge_errors() -> list[JudgeError]:
    return [
        JudgeError("x"),
        TransientJudgeError("x"),
        RateLimited("x", retry_after_s=3),
        LimiterBusy("x", retry_after_s=3),
        QuotaExhausted("x"),
        JobHalted("x"),
        Blocked("x"),
        UnparseableReply("x"),
        TruncatedReply("x"),
        errors.BadRequest("x"),
    ]


def test_each_error_is_handled_by_its_declared_policy() -> None:
    policies = {type(e).__name__: policy_of(e) for e in judge_errors()}
    assert policies == {
        "JudgeError": "never",
        "TransientJudgeError": "backoff",
        "RateLimited": "countdown",
        "LimiterBusy": "countdown",
        "QuotaExhausted": "pause",
        "JobHalted": "pause",
        "Blocked": "never",
        "UnparseableReply": "never",
        "TruncatedReply": "never",
        "BadRequest": "never",
    }
    assert policy_of(ValueError("a bug of ours")) == "never"
    # What a metric lets through to the task, and what the judge client tries again itself.
    assert [type(e).__name__ for e in judge_errors() if must_propagate(e)] == [
        "RateLimited",
        "LimiterBusy",
        "QuotaExhausted",
        "JobHalted",
    ]
    assert [type(e).__name__ for e in judge_errors() if retried_in_process(e)] == [
        "TransientJudgeError"
    ]


def test_only_the_error_module_reads_the_policy() -> None:
    """`task.retry(...)` is Celery's; any other `.retry` read outside evalq/core/errors.py is a
    second place deciding what an error means."""
    readers = []
    for package in ("evalq",):
        for path in sorted((Path(ROOT) / package).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if rel == Path("evalq/core/errors.py"):
                continue
            tree = ast.parse(path.read_text())
            called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
            readers += [
                f"{rel}:{n.lineno}"
                for n in ast.walk(tree)
                if isinstance(n, ast.Attribute) and n.attr == "retry" and id(n) not in called
            ]
    assert readers == []


def test_a_failed_calls_cost_is_fixed_when_its_error_is_made() -> None:
    spent = CallCost(attempts=3, limiter_wait_s=1.5, prompt_tokens=40, thought_tokens=300)
    error = TruncatedReply("cut off", cost=spent)
    assert error.cost == spent  # 3 attempts, 1.5 s on the limiter, 40 + 300 tokens
    with pytest.raises(AttributeError):
        error.cost.attempts = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        error.cost = CallCost()  # type: ignore[misc]
    # The judge client adds what it counted by making a new error; the raised one is unchanged.
    busy = LimiterBusy("far", retry_after_s=12.0, cost=CallCost(attempts=0))
    counted = busy.costing(attempts=2, limiter_wait_s=0.5)
    assert type(counted) is LimiterBusy and counted is not busy
    assert (counted.cost, counted.retry_after_s) == (CallCost(attempts=2, limiter_wait_s=0.5), 12.0)
    assert (counted.message, str(counted)) == ("far", "far")
    assert busy.cost == CallCost(attempts=0)
