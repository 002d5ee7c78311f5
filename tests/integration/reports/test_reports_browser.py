"""Every metric's report and comparison report, from real jobs (real Redis, real workers, the
fake Gemini server), rendered in headless Chromium and read back as the DOM a person sees:
the judged texts and the judge's explanations are there, no scored verdict reads "unscored",
the metric figures are tables, and nothing reaches past its card."""

from __future__ import annotations

import html as html_lib
import re
from pathlib import Path
from typing import Any

import pytest

from devtools.screenshots import (
    COMPARE_CROPS,
    OFF_TOPIC_ID,
    REPORT_CROPS,
    Crop,
    _rows,
    dump_dom,
    example_runs,
    layout_problems,
    measure,
    run_and_render,
)
from evalq.client.output.html.report import render_report
from evalq.examples.datasets import write_rows
from tests.conftest import FakeGemini
from tests.support.chromium import chromium_or_skip

pytestmark = pytest.mark.integration

INTERVAL = re.compile(r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]")


def page_text(path: Path) -> str:
    """The rendered page's text (tags dropped, entities read), whitespace collapsed."""
    return as_text(dump_dom(path))


def as_text(dom: str) -> str:
    dom = re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S)
    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", dom)).split())


def section(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


def heading_section(dom: str, title: str) -> str:
    """The text under the <h2> titled `title`, up to the next <h2>."""
    return as_text(dom.split(f"<h2>{title}</h2>", 1)[1].split("<h2>", 1)[0])


def judged_texts(metric: str, data: dict[str, Any], details: dict[str, Any]) -> list[str]:
    """What the judge was shown, per metric, as stored with the row."""
    if metric == "pairwise":
        return [data["response_a"], data["response_b"]]
    if metric == "rank":
        return [data[c] for c in details["candidates"]]
    if metric == "groundedness":
        return [data["query"], details.get("response") or data["response"]]
    if metric == "pointwise":
        return [data["response"]]
    return [data.get("prompt", "")] if data.get("prompt") else []


def explanations(metric: str, details: dict[str, Any]) -> list[str]:
    if metric == "pointwise":
        return [s["explanation"] for j in details["judges"].values() for s in j["samples"]]
    if metric in ("pairwise", "rank"):
        return [e for c in details["comparisons"] for e in c["explanations"].values()]
    if metric == "groundedness":
        return [j["why"] for j in details["judges"].values()]
    return []


def assert_crops_found(report: Path, compare: Path, *, tagged: bool) -> None:
    """The manual's screenshots find their parts: the summary above the per-tag chart (or the
    metric figures) above the first row; the comparison's top above its rows."""
    parts = measure(report, REPORT_CROPS)
    middle = "tags" if tagged else "figures"
    assert sorted(parts) == sorted(["summary", middle, "row"]), parts
    assert parts["summary"].bottom <= parts[middle].top < parts[middle].bottom <= parts["row"].top
    found = measure(compare, (*COMPARE_CROPS, Crop("rows", ".card", ".card")))
    assert found[""].top < found[""].bottom <= found["rows"].top, found


def test_every_metric_reads_like_the_metric_in_chromium(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    chromium_or_skip()
    runs = example_runs(tmp_path / "data")
    rendered = run_and_render(client, runs, tmp_path / "html", judge_prefix="reports-browser")
    assert [r.metric for r in rendered] == [
        "gecko-image",
        "gecko-video",
        "groundedness",
        "pointwise",
        "pairwise",
        "rank",
        "rubric",
    ]
    for done in rendered:
        job_a = done.jobs[0]
        dom = dump_dom(done.report)
        text = as_text(dom)
        assert "unscored: None" not in text, done.metric
        figures = heading_section(dom, "Metric figures")
        assert "{" not in figures and '"' not in figures, (done.metric, figures)
        inputs = client.inputs(job_a)
        for result in client.results(job_a):
            data = inputs[result.id].data
            assert result.id in text, (done.metric, result.id)
            for judged in judged_texts(done.metric, data, result.details):
                assert " ".join(judged.split()) in text, (done.metric, result.id, judged[:60])
            for words in explanations(done.metric, result.details):
                assert " ".join(words.split()) in text, (done.metric, result.id, words[:60])
        assert layout_problems(done.report) == [], done.metric
        compare = page_text(done.compare)
        assert "unscored: None" not in compare, done.metric
        assert "cost" in compare and "not known" not in compare, done.metric
        assert layout_problems(done.compare) == [], done.metric
        if done.metric not in ("gecko-image", "gecko-video"):
            assert 'class="thumb"' not in done.compare.read_text(), done.metric
            other = client.inputs(done.jobs[1])
            shown = [
                r.id
                for r in client.results(done.jobs[1])
                if all(
                    " ".join(t.split()) in compare
                    for t in judged_texts(done.metric, other[r.id].data, r.details)
                )
            ]
            assert shown, done.metric  # side B's rows show the texts its judge read
        if done.metric in ("gecko-image", "rank"):
            assert_crops_found(done.report, done.compare, tagged=done.metric == "gecko-image")
        if done.metric == "pairwise":
            assert INTERVAL.search(figures), figures  # win rates with their intervals
            assert "winner A (response_a)" in text
        if done.metric == "groundedness":
            # the off-topic row's sentences are labelled, but the row is not grounded
            off_topic = text.split(OFF_TOPIC_ID, 1)[1].split("raw details", 1)[0]
            assert "response not eligible" in off_topic
            assert "not counted" in off_topic


def test_a_candidates_report_has_a_section_per_candidate(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    """--candidates response,baseline on pointwise: each candidate's figures, and each cell
    shows its own candidate's response."""
    chromium_or_skip()
    from evalq.examples.ratings import write_pointwise_example

    source = write_pointwise_example(tmp_path / "pointwise")
    rows = [dict(r, baseline=r["response"].split(". ")[0] + ".") for r in _rows(source)]
    dataset = write_rows(source.with_name("candidates.jsonl"), rows)
    job = client.submit(
        "pointwise",
        dataset,
        judge_model="reports-browser-candidates",
        options={"template": "summarization_quality", "candidates": ["response", "baseline"]},
    ).job_id
    summary = client.wait(job, timeout_s=300)
    inputs: dict[Any, Any] = {}
    for candidate in ("response", "baseline"):
        inputs.update({(i, candidate): r for i, r in client.inputs(job, candidate).items()})
    page = tmp_path / "candidates.html"
    page.write_text(render_report(summary, client.results(job), inputs=inputs))
    text = page_text(page)
    per_candidate = section(text, "Per candidate", "Metric figures")
    for name, figures in summary.candidates.items():
        assert name in per_candidate
        assert f"{figures.mean_score:.3f}" in per_candidate
    assert "mean score, pooled" in text
    for row in rows:
        assert f"{row['id']} · baseline" in text
        assert " ".join(row["baseline"].split()) in text
        assert " ".join(row["response"].split()) in text
    assert layout_problems(page) == []
