"""Judge model versions (evalq.core.versions): a verdict's reply version, a row's per judge
model, a job's over its rows; several versions of one alias are kept, sorted and joined."""

from __future__ import annotations

from evalq.core.models import Question, Verdict
from evalq.core.scoring import question_results
from evalq.core.versions import (
    join_versions,
    merge_versions,
    split_versions,
    verdict_versions,
)


def verdict(index: int, model: str | None, version: str | None) -> Verdict:
    return Verdict(index=index, status="ok", answer="yes", judge_model=model, model_version=version)


def test_several_versions_join_sorted_and_distinct() -> None:
    assert join_versions(["flash-002", None, "flash-001", "flash-002"]) == "flash-001,flash-002"
    assert join_versions(["a,b", "c"]) == "a,b,c"
    assert join_versions([None, ""]) is None
    assert split_versions("b, a") == {"a", "b"}
    assert split_versions(None) == set()


def test_a_rows_versions_are_per_judge_model_and_unread_replies_are_left_out() -> None:
    verdicts = [
        verdict(0, "flash", "flash-002"),
        verdict(1, "flash", "flash-001"),
        verdict(2, "pro", "pro-001"),
        verdict(3, "lite", None),  # no reply was read (a 4xx, a network error)
        verdict(4, None, "main-001"),  # a metric that names no judge: the job's main one
    ]
    assert verdict_versions(verdicts, "main") == {
        "flash": "flash-001,flash-002",
        "main": "main-001",
        "pro": "pro-001",
    }


def test_a_jobs_versions_merge_its_rows() -> None:
    rows = [{"flash": "flash-001"}, {"flash": "flash-001,flash-002"}, {"pro": "pro-001"}, {}]
    assert merge_versions(rows) == {"flash": "flash-001,flash-002", "pro": "pro-001"}


def test_a_question_result_carries_its_verdicts_version() -> None:
    questions = [
        Question(question="Is it red?", expected="yes"),
        Question(question="Round?", expected="yes"),
    ]
    results = question_results(questions, {0: verdict(0, "flash", "flash-002")})
    assert [r.model_version for r in results] == ["flash-002", None]  # no verdict, no version
