"""The judge's noise floor as `evalq status` and the HTML report show it."""

from __future__ import annotations

from evalq.client.output.html.report import render_report
from evalq.client.output.noise_floor import NOISE_TITLE, noise_rows
from evalq.client.output.terminal.summary import summary_rows
from evalq.core.models import NoiseFloor, PanelNoise
from evalq.core.noise_floor import NO_REFERENCE
from tests.support.summaries import job_summary

FLOOR = NoiseFloor(
    units=8,
    samples=24,
    undecided=1,
    split_share=0.25,
    split_ci95=(0.07, 0.59),
    alpha=0.812,
    alpha_level="interval",
    order_units=4,
    order_disagreement=0.5,
    order_ci95=(0.15, 0.85),
    mean_score_noise_se=0.01,
    mean_score_noise_margin=0.0196,
    panel=PanelNoise(
        judges=["j1", "j2"], units=8, reference="human", error_correlation=0.5,
        effective_judges=4 / 3,
    ),
)  # fmt: skip


def test_every_figure_has_a_row_with_what_it_is_out_of() -> None:
    rows = dict(noise_rows(FLOOR))
    assert rows[NOISE_TITLE] == "from 8 repeated units (24 samples), 1 undecided at the maximum"
    assert rows["  samples disagree"] == "0.250 of units · 95% CI [0.070, 0.590]"
    assert rows["  alpha across samples"] == "0.812 (interval)"
    assert rows["  orders disagree (AB vs BA)"] == "0.500 of 4 pairs · 95% CI [0.150, 0.850]"
    assert rows["  mean score's judge noise"].startswith("±0.020 (95%")
    assert rows["  panel"] == (
        "2 judges: error correlation 0.500 against human (8 units), worth 1.3 independent"
    )


def test_a_panel_without_reference_says_why_and_no_repeats_no_rows() -> None:
    bare = NoiseFloor(units=1, samples=2, panel=PanelNoise(judges=["a", "b"], note=NO_REFERENCE))
    assert dict(noise_rows(bare))["  panel"] == f"2 judges: {NO_REFERENCE}"
    assert noise_rows(None) == []


def test_status_and_report_show_the_noise_floor() -> None:
    summary = job_summary(2, metric="pointwise", noise_floor=FLOOR)
    assert (NOISE_TITLE, noise_rows(FLOOR)[0][1]) in summary_rows(summary)
    page = render_report(summary, [])
    assert "The judge&#39;s noise floor" in page or "The judge's noise floor" in page
    assert "0.812 (interval)" in page
    plain = job_summary(2, metric="pointwise")
    assert NOISE_TITLE not in dict(summary_rows(plain))
    assert "noise floor</h2>" not in render_report(plain, [])
