"""The report's repeated verdicts: each row's samples, certainty and undecided marker, and the
borderline list near the top, linked to the rows, counted in the header, and escaped."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalq.client.output.html.borderline import (
    BORDERLINE_BELOW,
    LISTED_AT_MOST,
    borderline,
    repeat_line,
    state_of,
)
from evalq.client.output.html.comparison import render_comparison
from evalq.client.output.html.report import render_report
from evalq.comparisons.align import Side
from evalq.comparisons.comparison import compare_sides
from evalq.core.models import JobSummary, Repeats, RowResult, Sample
from tests.support.report_pages import (
    borderline_list_links,
    borderline_section,
    report_card_anchors,
)
from tests.support.summaries import job_summary

HOSTILE_TEXT = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def repeated_verdict(
    answers: Sequence[str | None],
    verdict: str | None,
    certainty: float | None,
    *,
    unit: str = "rating",
    decided: bool = True,
    **more: Any,
) -> Repeats:
    return Repeats(
        unit=unit,
        judge_model="gemini-2.5-flash",
        samples=[Sample(answer=a) for a in answers],
        verdict=verdict,
        decided=decided,
        certainty=certainty,
        rule="beta-binomial-predictive",
        **more,
    )


def row_with_repeats(row_id: str, line: int, *repeats: Repeats) -> RowResult:
    return RowResult(
        id=row_id,
        line=line,
        prompt="p",
        status="scored",
        score=0.75,
        details={"mean_rating": 4.0},
        repeats=list(repeats),
    )


def sure_row(row_id: str, line: int) -> RowResult:
    return row_with_repeats(row_id, line, repeated_verdict(["4", "4", "4"], "4", 0.99))


def undecided_row(row_id: str, line: int) -> RowResult:
    split = ["4", "5", "4", "5", "4", "5", "4", "5"]
    return row_with_repeats(row_id, line, repeated_verdict(split, None, 0.5, decided=False))


def borderline_row(row_id: str, line: int, certainty: float) -> RowResult:
    return row_with_repeats(row_id, line, repeated_verdict(["yes", "yes", "yes"], "yes", certainty))


def repeats_summary(rows: int) -> JobSummary:
    return job_summary(rows, metric="pointwise")


def test_each_repeated_verdict_shows_its_samples_certainty_and_whether_it_settled() -> None:
    rows = [
        row_with_repeats(
            "r1",
            1,
            repeated_verdict(["4", "4", "3", "4", "4"], "4", 0.97, interval=(3.4, 4.4)),
        ),
        undecided_row("r2", 2),
    ]
    html = render_report(repeats_summary(2), rows)
    first, second = html.split('data-row="r1"')[1].split('data-row="r2"')
    assert "4 of 5 samples say 4" in first
    assert "certainty 0.97" in first
    assert "mean's 95% interval [3.400, 4.400]" in first
    assert "samples: 4 · 4 · 3 · 4 · 4 · rule beta-binomial-predictive" in first
    assert "gemini-2.5-flash" in first
    assert 'class="undecided"' not in first
    assert '<span class="undecided">undecided</span>' in second
    assert "split: 4 say 4, 4 say 5 (8 samples)" in second


def test_a_pairwise_sample_shows_its_order_and_a_soft_sample_its_probability() -> None:
    comparison = Repeats(
        unit="A vs B",
        samples=[Sample(answer="A", order="AB"), Sample(answer="A", order="BA", probability=0.55)],
        verdict="A",
        certainty=0.96,
    )
    line = repeat_line(comparison)
    assert line.answers == "A (AB) · A (BA) p=0.55"
    assert line.tally == "2 of 2 samples say A"


def test_borderline_verdicts_are_listed_on_top_least_sure_first_linked_to_rows() -> None:
    rows = [
        sure_row("sure-1", 1),
        borderline_row("border-93", 2, 0.93),
        undecided_row("split-1", 3),
        borderline_row("border-91", 4, 0.91),
        undecided_row("split-2", 5),
        sure_row("sure-2", 6),
    ]
    html = render_report(repeats_summary(len(rows)), rows)
    assert "2 verdicts undecided, 2 borderline (certainty under 0.95)" in html
    header = html.split("<table>", 1)[0]  # under the title, before the summary table
    assert (
        '2 verdicts undecided, 2 borderline (certainty under 0.95)</b>: <a href="#borderline">'
        in header
    )
    assert html.index('id="borderline"') < html.index("<h2>Rows")
    assert "6 verdicts from 28 samples (4.667 per verdict)" in html
    links = borderline_list_links(html)
    assert [row for _, row in links] == ["split-1", "split-2", "border-91", "border-93"]
    cards = report_card_anchors(html)
    assert len(set(cards.values())) == len(rows)  # every card its own anchor
    for anchor, row in links:
        assert cards[row] == anchor
    assert "sure-1" not in borderline_section(html)


def test_untrusted_row_ids_and_questions_are_escaped_in_the_list_and_rows() -> None:
    question = repeated_verdict(
        ["yes", "no", "yes", "no"], None, 0.5, unit=f"q1: {HOSTILE_TEXT}", decided=False
    )
    rows = [row_with_repeats(HOSTILE_TEXT, 1, question)]
    html = render_report(repeats_summary(1), rows)
    assert "<script>" not in html
    assert "<img src=x" not in html
    assert "&lt;script&gt;" in borderline_section(html)
    anchors = [anchor for anchor, _ in borderline_list_links(html)]
    assert anchors == ["row-1"]  # an anchor is a number, never the user's id


def test_a_row_beyond_the_rows_shown_is_listed_and_counted_without_a_link() -> None:
    rows = [sure_row("shown", 1), undecided_row("hidden", 2)]
    html = render_report(repeats_summary(2), rows, max_rows=1)
    section = borderline_section(html)
    assert 'hidden <span class="note">(beyond the rows shown)</span>' in section
    assert borderline_list_links(html) == []
    assert "1 verdict undecided, 0 borderline" in html


def test_the_list_stops_at_its_limit_and_counts_the_rest() -> None:
    rows = [undecided_row(f"s{i}", i) for i in range(LISTED_AT_MOST + 3)]
    found = borderline(rows, {i: r.id for i, r in enumerate(rows)}, shown=len(rows))
    assert found is not None
    assert (found.undecided, found.borderline, found.more) == (LISTED_AT_MOST + 3, 0, 3)
    assert len(found.listed) == LISTED_AT_MOST
    html = render_report(repeats_summary(len(rows)), rows)
    assert "3 more not listed" in html


def test_a_verdict_with_no_answered_sample_is_unscored_not_undecided() -> None:
    none_answered = repeated_verdict([None, None], None, None, decided=False)
    assert state_of(none_answered) == "unscored"
    assert repeat_line(none_answered).tally == "no answer (2 samples, 2 unscored)"
    rows = [row_with_repeats("r1", 1, none_answered)]
    html = render_report(repeats_summary(1), rows)
    assert "0 verdicts undecided, 0 borderline" in html  # the summary table's count
    assert 'id="borderline"' not in html
    assert '<span class="unscored">unscored</span>' in html


def test_states_follow_the_rules_certainty() -> None:
    assert state_of(repeated_verdict(["4", "4"], "4", BORDERLINE_BELOW)) == "sure"
    assert state_of(repeated_verdict(["4", "4"], "4", BORDERLINE_BELOW - 0.01)) == "borderline"
    assert state_of(repeated_verdict(["4", "5"], None, 0.5, decided=False)) == "undecided"


def test_a_job_without_repeats_has_no_borderline_parts() -> None:
    plain = RowResult(id="r1", line=1, prompt="p", status="scored", score=0.5)
    html = render_report(repeats_summary(1), [plain])
    assert 'id="borderline"' not in html
    assert "repeated verdicts" not in html
    assert 'id="row-1"' in html
    assert borderline([plain], {0: "r1"}, shown=1) is None


def test_a_comparison_shows_each_sides_repeated_verdicts() -> None:
    sure = sure_row("q1", 1).model_copy(update={"score": 1.0})
    split = undecided_row("q1", 1).model_copy(update={"score": 0.0})
    sides = [
        Side("a", [sure], job_id="a", metric="pointwise"),
        Side("b", [split], job_id="b", metric="pointwise"),
    ]
    html = render_comparison(compare_sides(sides))
    side_a, side_b = html.split('class="side a"')[1].split('class="side b"')
    assert "3 of 3 samples say 4" in side_a and 'class="undecided"' not in side_a
    assert '<span class="undecided">undecided</span>' in side_b
    assert "split: 4 say 4, 4 say 5 (8 samples)" in side_b
