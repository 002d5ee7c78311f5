"""The HTML report: content checks, escaping of untrusted text, and a render in headless
Chromium to a PNG (how it looks to a person)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalq.client.output.html.report import render_report
from evalq.core.models import JobSummary, MediaRef, QuestionResult, RowInput, RowResult
from tests.conftest import FakeGemini
from tests.support.chromium import assert_rendered, chromium_or_skip
from tests.support.datasets import png
from tests.support.summaries import job_summary

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


# Two rows: one scored, one failed on its input.
REPORTED: dict[str, Any] = {
    "metric": "gecko-image",
    "simulated": True,
    "rows_scored": 1,
    "rows_failed": 1,
    "tag_scores": {"color": 0.5, "object": 1.0},
    "tag_counts": {"color": 1, "object": 1},
    "unscored_by_reason": {"parse_error": 1},
    "rows_failed_by_reason": {"input_error": 1},
    "judge_calls": 3,
}


def reported_summary(**overrides: Any) -> JobSummary:
    return job_summary(2, **(REPORTED | overrides))


def test_report_content_and_escaping(tmp_path: Path) -> None:
    image = png(tmp_path / "a.png", "blue")
    rows = [
        RowResult(
            id="r1",
            line=1,
            prompt=HOSTILE,
            status="scored",
            score=0.5,
            tag_scores={"color": 0.5},
            questions=[
                QuestionResult(
                    question="Is it blue?",
                    tag="color",
                    expected="yes",
                    answer="yes",
                    result=1,
                    status="ok",
                ),
                QuestionResult(
                    question="Is it red?",
                    tag="color",
                    expected="yes",
                    answer=None,
                    result=None,
                    status="unscored",
                    reason="parse_error",
                    detail="no verdict",
                ),
            ],
        ),
        RowResult(
            id="r2",
            line=2,
            prompt="p",
            status="failed",
            score=None,
            reason="input_error",
            error="row r2: field 'image': file not found",
        ),
    ]
    inputs = {
        "r1": RowInput(
            id="r1", line=1, prompt="p", media={"image": MediaRef(kind="path", value=str(image))}
        )
    }
    html = render_report(reported_summary(), rows, inputs=inputs, data_roots=[str(image.parent)])
    assert "<script>alert" not in html
    assert "&lt;script&gt;" in html
    assert "SIMULATED JUDGE" in html
    assert "data:image/jpeg;base64," in html  # the thumbnail is inlined
    assert "unscored: parse_error" in html
    assert "file not found" in html
    assert "<svg" in html
    assert html.count('class="card row ') == 2


def test_a_preview_reads_only_under_the_jobs_data_roots(tmp_path: Path) -> None:
    """The stored path was checked at submit; what it points at may have changed since. The
    report reads it through the worker's checks: under the job's roots, no link followed."""
    data, outside = tmp_path / "data", tmp_path / "outside"
    data.mkdir()
    outside.mkdir()
    secret = png(outside / "secret.png", "red")
    inside = png(data / "a.png", "blue")
    swapped = data / "b.png"
    swapped.symlink_to(secret)  # a link swapped in after submit
    rows = [
        RowResult(id=i, line=n, prompt="p", status="scored", score=1.0)
        for n, i in enumerate(("in", "link", "none"), start=1)
    ]
    inputs = {
        "in": RowInput(id="in", line=1, media={"image": MediaRef(kind="path", value=str(inside))}),
        "link": RowInput(
            id="link", line=2, media={"image": MediaRef(kind="path", value=str(swapped))}
        ),
    }
    html = render_report(reported_summary(), rows, inputs=inputs, data_roots=[str(data)])
    assert html.count("data:image/jpeg;base64,") == 1  # only the file under the roots
    assert "no preview (b.png)" in html
    without_roots = render_report(reported_summary(), rows[:1], inputs=inputs)
    assert "data:image/jpeg;base64," not in without_roots


def test_report_shows_the_interval_method_and_rows_per_tag() -> None:
    html = render_report(
        reported_summary(
            mean_score=1.0,
            ci95=(0.7225, 1.0),
            ci_method="wilson",
            rows_scored=10,
            rows_failed=0,
            tag_scores={"color": 1.0, "spatial": 0.5},
            tag_counts={"color": 300, "spatial": 3},
            tag_ci95={"color": (0.9874, 1.0), "spatial": (0.0939, 0.9061)},
            tag_ci_method={"color": "wilson", "spatial": "wilson"},
        ),
        [],
    )
    assert "95% CI [0.723, 1.000] (wilson, 10 rows)" in html
    assert (
        "<tr><td>spatial</td><td>0.500</td><td>[0.094, 0.906]</td><td>wilson</td><td>3</td></tr>"
        in html
    )
    assert "0.500 [0.094, 0.906] (3 rows)" in html  # the chart's label, next to its whisker


def test_long_tag_names_stay_inside_the_chart_in_chromium(tmp_path: Path) -> None:
    chromium_or_skip()
    from devtools.screenshots import layout_problems

    tags = {"temporal relation": 0.667, "a tag named at some length by its author": 0.5, "x": 1.0}
    html = render_report(reported_summary(tag_scores=tags, tag_counts=dict.fromkeys(tags, 3)), [])
    page = tmp_path / "report.html"
    page.write_text(html, encoding="utf-8")
    assert layout_problems(page) == []


def test_report_ranking_as_tables_and_sentences() -> None:
    metric_summary = {
        "ranking": [
            {"candidate": "cited", "strength": 0.6, "ci95": [0.5, 0.7]},
            {"candidate": "terse", "strength": 0.4, "ci95": [0.3, 0.5]},
        ],
        "win_matrix": {"cited": {"terse": 0.8}, "terse": {"cited": 0.2}},
        "agreement": 0.9,
    }
    details = {
        "judges": {
            "m": {
                "status": "ok",
                "grounded": 1,
                "eligible": True,
                "why": "all 1 sentence(s) needing support are supported",
                "sentences": [
                    {"sentence": "Paris is in France.", "label": "supported"},
                    {"sentence": "Hope this helps!", "label": "no_rad"},
                ],
            }
        }
    }
    rows = [RowResult(id="g", line=1, prompt="", status="scored", score=1.0, details=details)]
    html = render_report(
        reported_summary(
            metric="groundedness", tag_scores={}, tag_counts={}, metric_summary=metric_summary
        ),
        rows,
    )
    assert "<h3>Win matrix</h3>" in html
    assert '<th>cited</th><td class="num">0.800</td>' in html
    assert '<th>Agreement</th><td class="num">0.900</td>' in html
    assert "[0.500, 0.700]" in html
    assert "Paris is in France." in html
    assert "#d9f2d9" in html  # supported colour


@pytest.mark.integration
def test_report_of_a_real_job_renders_in_chromium(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    chromium_or_skip()
    from evalq.examples.gecko import write_gecko_image_example

    dataset = write_gecko_image_example(tmp_path / "example")
    job = client.submit("gecko-image", dataset, judge_model="report-test-judge").job_id
    client.wait(job, timeout_s=120)
    out = tmp_path / "report.html"
    html = render_report(
        client.summary(job),
        client.results(job),
        inputs=client.inputs(job),
        data_roots=client.data_roots(job),
    )
    out.write_text(html)
    assert_rendered(out, (1200, 1600), tmp_path, Path("/tmp/evalq-report-test.png"))
