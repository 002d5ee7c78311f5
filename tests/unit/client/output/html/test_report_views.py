"""The report reads like the metric: a verdict read as its rating, choice or labels, not "unscored"
(rating metrics store each unit as a question with result None even when scored); the judged texts,
the judge's explanation and labelled, rounded metric tables on the page.

An ineligible groundedness row says so beside its sentences; candidates and groups have their own
tables; a comparison shows both sides' texts."""

from __future__ import annotations

from typing import Any

from evalq.client.output.html.comparison import render_comparison
from evalq.client.output.html.figures import figure_tables
from evalq.client.output.html.report import render_report
from evalq.comparisons.align import Side
from evalq.comparisons.comparison import compare_sides
from evalq.core.models import (
    CandidateSummary,
    GroupSummary,
    JobSummary,
    QuestionResult,
    RowInput,
    RowResult,
)
from tests.support.summaries import job_summary

HOSTILE = "<script>alert(1)</script>"


def metric_summary(metric: str, **overrides: Any) -> JobSummary:
    base = {
        "metric": metric,
        "simulated": True,
        "mean_score": 0.75,
        "prompt_tokens": 1,
        "output_tokens": 1,
    }
    return job_summary(1, **(base | overrides))


def unit(label: str, answer: str) -> QuestionResult:
    """A scored rating unit as judging.unit_result stores it: status ok, result None."""
    return QuestionResult(
        question=label, tag="rating", expected="", answer=answer, result=None, status="ok"
    )


def pointwise_row(explanation: str = "Faithful and complete.") -> RowResult:
    details = {
        "template": "fluency",
        "ratings": [4],
        "mean_rating": 4.0,
        "judges": {
            "m": {
                "ratings": [4],
                "samples": [{"sample": 0, "rating": 4, "explanation": explanation, "status": "ok"}],
            }
        },
    }
    return RowResult(
        id="user-7",
        line=1,
        prompt="p",
        status="scored",
        score=0.75,
        questions=[unit("rating by m", "4")],
        details=details,
    )


def test_a_scored_rating_reads_as_its_rating_with_the_response_and_explanation() -> None:
    row_input = RowInput(id="user-7", line=1, data={"response": "Tides follow the Moon."})
    html = render_report(
        metric_summary("pointwise"), [pointwise_row()], inputs={"user-7": row_input}
    )
    assert "unscored: None" not in html
    assert "unscored" not in html.split("<h2>Rows")[1]
    assert "rating 4" in html
    assert "Faithful and complete." in html
    assert "Tides follow the Moon." in html
    assert "<b>user-7</b>" in html


def test_untrusted_text_from_data_and_judge_stays_escaped() -> None:
    row_input = RowInput(id="user-7", line=1, data={"response": HOSTILE})
    html = render_report(
        metric_summary("pointwise"), [pointwise_row(HOSTILE)], inputs={"user-7": row_input}
    )
    assert HOSTILE not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_pairwise_shows_both_responses_the_choice_per_order_and_win_rates_as_tables() -> None:
    details = {
        "sides": {"A": "response_a", "B": "response_b"},
        "winner": "A",
        "comparisons": [
            {
                "judge": "m",
                "sample": 0,
                "original": "A",
                "swapped": "B",
                "outcome": "A",
                "consistent": True,
                "explanations": {"original": "A cites the source.", "swapped": "B cites it."},
            }
        ],
    }
    row = RowResult(
        id="q1",
        line=1,
        prompt="p",
        status="scored",
        score=1.0,
        questions=[unit("original order, judge m", "A"), unit("swapped order, judge m", "B")],
        details=details,
    )
    figures = {
        "win_rates": {"A": 0.4, "B": 0.4, "tie": 0.2},
        "win_rates_ci95": {"A": [0.16818, 0.68732], "B": [0.1, 0.7], "tie": [0.03, 0.6]},
        "inconsistency_rate": 0.0,
    }
    data = {"response_a": "Spring tides align.", "response_b": "Warm water expands."}
    html = render_report(
        metric_summary("pairwise", metric_summary=figures),
        [row],
        inputs={"q1": RowInput(id="q1", line=1, data=data)},
    )
    assert "unscored" not in html.split("<h2>Rows")[1]
    assert "Spring tides align." in html and "Warm water expands." in html
    assert "winner A (response_a)" in html
    assert "A cites the source." in html and "B cites it." in html
    assert "0.400 [0.168, 0.687]" in html
    assert '{"A"' not in html and "0.7224" not in html


def test_an_ineligible_groundedness_row_greys_its_labels_and_says_why() -> None:
    details = {
        "response": "Paris is in France.",
        "judges": {
            "m": {
                "status": "ok",
                "grounded": 0,
                "eligible": False,
                "eligibility_reason": "it answers another question",
                "why": "ineligible: it answers another question",
                "sentences": [{"sentence": "Paris is in France.", "label": "supported"}],
            }
        },
    }
    row = RowResult(id="g", line=1, prompt="", status="scored", score=0.0, details=details)
    html = render_report(metric_summary("groundedness"), [row])
    body = html.split("<h2>Rows")[1]
    assert "response not eligible: it answers another question" in body
    assert 'class="sentence void"' in body
    assert "supported, not counted" in body


def test_candidates_and_groups_have_their_own_tables() -> None:
    candidates = {
        name: CandidateSummary(
            rows=3, rows_scored=3, rows_partial=0, rows_failed=0, mean_score=mean, ci95=(0.1, 0.9)
        )
        for name, mean in (("response", 0.625), ("baseline", 0.4))
    }
    groups = [
        GroupSummary(
            column="category",
            value="spatial",
            candidate="response",
            rows=2,
            rows_scored=2,
            mean_score=0.5,
            ci95=(0.25, 0.75),
        )
    ]
    html = render_report(
        metric_summary("pointwise", candidates=candidates, group_by=["category"], groups=groups), []
    )
    assert "<h2>Per candidate</h2>" in html
    assert '<td><b>baseline</b></td><td class="num">0.400</td>' in html
    assert "mean score, all candidates pooled" in html  # scope not set: said anyway
    assert "<h2>Groups (category)</h2>" in html
    assert "<td><b>spatial</b></td><td>response</td>" in html
    assert "[0.250, 0.750]" in html


def test_figure_tables_label_and_round() -> None:
    tables = {
        t.title: t
        for t in figure_tables(
            {
                "rating_counts": {"1": 0, "4": 3},
                "mean_rating": 3.0,
                "mean_rating_ci95": [2.3333, 3.6667],
            }
        )
    }
    assert tables["Figures"].rows == (("Mean rating", "3.000 [2.333, 3.667]"),)
    assert tables["Rating counts"].rows == (("1", "0"), ("4", "3"))


def test_a_text_comparison_shows_both_sides_texts_and_costs() -> None:
    def side(label: str, response: str, rating: int) -> tuple[Side, dict[str, RowInput]]:
        row = pointwise_row(f"{label} explanation")
        row = row.model_copy(update={"score": (rating - 1) / 4})
        return (
            Side(label, [row], job_id=label, metric="pointwise"),
            {row.id: RowInput(id=row.id, line=1, data={"response": response})},
        )

    (a, inputs_a), (b, inputs_b) = side("a", "Long faithful summary.", 5), side("b", "Short.", 2)
    html = render_comparison(
        compare_sides([a, b]),
        inputs={"a": inputs_a, "b": inputs_b},
        summaries={
            "a": metric_summary("pointwise", cost_usd=0.0123),
            "b": metric_summary("pointwise"),
        },
    )
    assert "Long faithful summary." in html and "Short." in html
    assert "a explanation" in html and "b explanation" in html
    assert "unscored: None" not in html
    assert 'class="thumb"' not in html
    assert "Compared on mean rating (1-5)" in html and "(±4), 95% CI" in html  # the chart's scale
    assert "$0.0123" in html or "0.0123" in html
