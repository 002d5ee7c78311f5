"""The job summary's intervals (evalq/core/summary.py), built from row results; pure, no Redis."""

from __future__ import annotations

import json

from evalq.client.output.terminal.summary import summary_lines
from evalq.core.counters import JobCounters
from evalq.core.models import JobSummary, RowResult
from evalq.core.summary import build_summary
from evalq.stats.intervals import bootstrap_bca, wilson
from tests.support.job_configs import job_config


def tagged_row(i: int, score: float, tags: dict[str, float]) -> RowResult:
    return RowResult(id=str(i), line=i, prompt="p", status="scored", score=score, tag_scores=tags)


def finished_summary_of(rows: list[RowResult]) -> JobSummary:
    counters = JobCounters(status="finished", rows_done=len(rows), rows_scored=len(rows))
    return build_summary(job_config(rows_total=len(rows)), counters, {}, rows, now=1.0)


def test_ten_perfect_rows_get_a_wilson_interval_not_a_zero_wide_one() -> None:
    summary = finished_summary_of([tagged_row(i, 1.0, {"color": 1.0}) for i in range(10)])
    assert summary.mean_score == 1.0
    assert summary.ci_method == "wilson"
    assert summary.ci95 is not None
    assert (round(summary.ci95[0], 3), summary.ci95[1]) == (0.722, 1.0)


def test_skewed_scores_get_a_bootstrap_interval_and_say_so() -> None:
    scores = [1.0, 0.75, 1.0, 0.5, 1.0, 0.0, 1.0, 0.75, 1.0, 0.25]
    summary = finished_summary_of([tagged_row(i, s, {}) for i, s in enumerate(scores)])
    assert summary.ci_method == "bca"
    assert summary.ci95 == bootstrap_bca(scores)


def test_each_tag_has_its_interval_next_to_its_row_count() -> None:
    rows = [tagged_row(i, 1.0, {"color": 1.0, "object": 1.0}) for i in range(300)]
    rows += [tagged_row(300 + i, 1.0, {"spatial": 1.0}) for i in range(3)]
    summary = finished_summary_of(rows)
    assert summary.tag_counts == {"color": 300, "object": 300, "spatial": 3}
    assert summary.tag_ci95["spatial"] == wilson(3, 3)
    assert summary.tag_ci95["color"] == wilson(300, 300)
    assert summary.tag_ci_method == {"color": "wilson", "object": "wilson", "spatial": "wilson"}
    spatial, color = summary.tag_ci95["spatial"], summary.tag_ci95["color"]
    assert spatial is not None and color is not None
    assert spatial[0] < 0.5 and color[0] > 0.98  # 3 rows say far less than 300
    dumped = json.loads(summary.model_dump_json())  # what `--json` prints
    assert dumped["tag_ci95"]["spatial"] == list(spatial)
    assert dumped["ci_method"] == "wilson"
    assert dumped["tag_ci_method"]["spatial"] == "wilson"


def test_the_terminal_table_shows_each_tag_interval_method_and_rows() -> None:
    rows = [tagged_row(i, 1.0, {"color": 1.0}) for i in range(10)]
    rows += [tagged_row(10 + i, 0.5, {"spatial": v}) for i, v in enumerate([1.0, 0.0, 1.0])]
    text = "\n".join(summary_lines(finished_summary_of(rows), width=200))
    mean = next(line for line in text.splitlines() if "mean score" in line)
    assert "95% CI [" in mean and "(bca, 13 rows)" in mean
    color = next(line for line in text.splitlines() if "tag color" in line)
    assert "1.000  95% CI [0.722, 1.000] (wilson) · 10 rows" in color
    spatial = next(line for line in text.splitlines() if "tag spatial" in line)
    low, high = wilson(2, 3) or (0.0, 0.0)
    assert f"[{low:.3f}, {high:.3f}]" in spatial
    assert "3 rows" in spatial


def test_each_metric_is_summarised_with_the_roles_it_calls_only() -> None:
    """A rating job's status named Gecko's question writer and validator ("rubric cache hits",
    "rubric modest · validator min") though it never called either."""
    thinking = {"rubric": "modest", "validator": "min", "judge": "min", "candidate": "default"}
    counters = JobCounters(status="finished", rows_done=1, rows_scored=1)
    done = [tagged_row(0, 1.0, {})]

    def lines(metric: str, calls: JobCounters = counters) -> tuple[JobSummary, str]:
        job = job_config().model_copy(update={"metric": metric, "thinking": thinking})
        summary = build_summary(job, calls, {}, done, now=1.0)
        return summary, "\n".join(summary_lines(summary, width=200))

    rated, text = lines("pointwise")
    assert rated.thinking == {"judge": "min"}
    assert rated.judge_setup["thinking"] == {"judge": "min"}
    assert "rubric" not in text and "validator" not in text
    gecko, text = lines("gecko-image")
    assert gecko.thinking == {"rubric": "modest", "validator": "min"}
    assert "rubric cache hits 0" in text
    # The model under test's thinking is shown once it was called.
    generated, _ = lines("pointwise", counters.model_copy(update={"candidate_calls": 2}))
    assert generated.thinking == {"judge": "min", "candidate": "default"}
