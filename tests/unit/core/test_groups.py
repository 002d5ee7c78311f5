"""Figures per value of a user's column (--group-by) and the per-candidate headline: pure,
from row results, no Redis."""

from __future__ import annotations

import json

import pytest

from evalq.client.output.terminal.summary import summary_lines
from evalq.core.counters import JobCounters
from evalq.core.errors import DatasetError
from evalq.core.groups import NO_VALUE, check_group_columns, group_summaries
from evalq.core.models import JobSummary, RowResult
from evalq.core.summary import build_summary
from tests.support.job_configs import job_config


def category_row(
    i: int, score: float | None, category: str | None, candidate: str | None = None
) -> RowResult:
    return RowResult(
        id=str(i),
        line=i,
        prompt="p",
        status="scored" if score is not None else "failed",
        score=score,
        tag_scores={} if score is None else {"color": score},
        extra={} if category is None else {"category": category},
        candidate=candidate,
    )


def summary_of(rows: list[RowResult], **update: object) -> JobSummary:
    return build_summary(
        job_config(rows_total=len(rows), **update), JobCounters(), {}, rows, now=1.0
    )


def text(summary: JobSummary) -> str:
    return "\n".join(summary_lines(summary, width=200))


def test_group_by_category_gives_each_value_its_mean_and_interval() -> None:
    rows = [category_row(i, 1.0, "animals") for i in range(5)]
    rows += [category_row(5 + i, float(i % 2), "text") for i in range(6)]
    rows.append(category_row(11, 0.5, None))
    summary = summary_of(rows, group_by=["category"])
    groups = {g.value: g for g in summary.groups}
    assert list(groups) == ["animals", "text", NO_VALUE]
    assert (groups["animals"].rows, groups["animals"].mean_score) == (5, 1.0)
    assert groups["animals"].ci_method == "wilson" and groups["animals"].ci95 is not None
    assert groups["text"].mean_score == 0.5 and groups["text"].tag_counts == {"color": 6}
    data = json.loads(summary.model_dump_json())
    assert data["group_by"] == ["category"]
    assert {g["value"] for g in data["groups"]} == {"animals", "text", NO_VALUE}
    shown = text(summary)
    assert "category=animals" in shown and "category=text" in shown and "95% CI" in shown


def test_groups_are_per_candidate_in_a_multi_candidate_job() -> None:
    rows = [category_row(i, 1.0, "a", "sdxl") for i in range(3)]
    rows += [category_row(i, 0.0, "a", "flux") for i in range(3)]
    summary = summary_of(rows, group_by=["category"], options={"candidates": ["sdxl", "flux"]})
    assert [(g.value, g.candidate, g.mean_score) for g in summary.groups] == [
        ("a", "sdxl", 1.0),
        ("a", "flux", 0.0),
    ]


def test_a_group_column_no_row_has_names_it_and_the_columns_there() -> None:
    rows = [category_row(1, 1.0, "a")]
    with pytest.raises(DatasetError) as caught:
        check_group_columns(["categroy"], rows)
    assert "'categroy'" in str(caught.value) and "category" in str(caught.value)
    assert group_summaries([], ["anything"]) == []


def test_a_multi_candidate_headline_is_per_candidate_and_the_pool_is_labelled() -> None:
    rows = [category_row(i, 1.0, None, "sdxl") for i in range(4)]
    rows += [category_row(i, 0.0, None, "flux") for i in range(4)]
    summary = summary_of(rows, options={"candidates": ["sdxl", "flux"]})
    assert summary.mean_score_scope == "pooled over 2 candidates"
    assert json.loads(summary.model_dump_json())["mean_score_scope"] == "pooled over 2 candidates"
    shown = text(summary)
    lines = [line for line in shown.splitlines() if "candidate" in line or "mean score" in line]
    assert "candidate sdxl" in lines[0] and "1.000" in lines[0]  # a candidate leads
    assert any("mean score (pooled over 2 candidates)" in line for line in lines)
    assert "tag color (pooled)" in shown
    assert summary_of([category_row(1, 1.0, None)]).mean_score_scope == "all rows"


def rated_cell(i: int, rating: int, candidate: str) -> RowResult:
    """A pointwise cell rated `rating` (1-5) by one judge."""
    return RowResult(
        id=str(i),
        line=i,
        prompt="p",
        status="scored",
        score=(rating - 1) / 4,
        details={"mean_rating": float(rating), "ratings": [rating], "judges": {}},
        candidate=candidate,
    )


def test_a_candidates_metric_figures_are_its_own_and_the_pool_is_labelled() -> None:
    rows = [rated_cell(i, 5, "good") for i in range(3)] + [
        rated_cell(i, 2, "poor") for i in range(3)
    ]
    summary = summary_of(rows, metric="pointwise", options={"candidates": ["good", "poor"]})
    assert summary.candidates["good"].metric_summary["mean_rating"] == 5.0
    assert summary.candidates["poor"].metric_summary["mean_rating"] == 2.0
    assert summary.metric_summary["mean_rating"] == 3.5  # both models' cells
    shown = text(summary)
    assert "good: mean rating" in shown and "poor: mean rating" in shown
    assert "mean rating (pooled)" in shown
