"""evalq calibrate's client side on a calibration of rows built here: the API's frames, the
table within 80 columns, the HTML page escaped, and --setup read as the run flags."""

from __future__ import annotations

import io
import math

import click
import pytest
from rich.console import Console

from evalq.client.cli.calibrate import setup_keywords
from evalq.client.output.exports.frames import calibration_frames
from evalq.client.output.html.calibration import render_calibration_html
from evalq.client.output.terminal.calibration import print_calibration
from evalq.core.human.calibration import calibration
from tests.support.calibration_setups import RATINGS_A, RATINGS_B, setup_rows


def test_api_frames_one_row_per_setup_and_pair() -> None:
    result = calibration([setup_rows("a", RATINGS_A), setup_rows("b", RATINGS_B)], "human")
    out = calibration_frames(result, {"a": "ajob", "b": "bjob"})
    assert list(out.setups["setup"]) == ["a", "b"]
    assert out.setups.loc[0, "spearman"] == pytest.approx(result.setups[0].spearman.value)
    assert out.setups.loc[0, "rows_left_out"] == 3
    assert {"spearman_ci_low", "kendall_ci_high", "pairwise_accuracy", "cost_per_row_usd"} <= set(
        out.setups.columns
    )
    assert list(out.differences[["a", "b"]].iloc[0]) == ["a", "b"]
    assert not math.isnan(out.differences.loc[0, "p_holm"])
    assert sorted(out.left_out["id"]) == ["r12", "r12", "r13", "r13", "r14", "r14"]
    assert out.best_per_cost == "a"


def test_the_table_fits_80_columns_and_the_page_is_escaped() -> None:
    long_name = "gemini-2.5-pro with thinking"
    setups = [
        setup_rows(long_name, RATINGS_A),
        setup_rows("<script>alert(1)</script>", RATINGS_B, cost=None),
    ]
    result = calibration(setups, "human", resamples=200)
    buffer = io.StringIO()
    print_calibration(Console(file=buffer, width=80, force_terminal=False), result)
    text = buffer.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    flat = " ".join(text.split())
    assert f"{result.setups[0].spearman.value:.2f} [" in flat
    assert "Best per unit of cost:" in flat and "unknown" in flat
    assert "1 no label (r12)" in flat
    page = render_calibration_html(result)
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_setup_keywords_are_the_run_flags_and_evaluates_own() -> None:
    name, keywords = setup_keywords(
        "pro:template=fluency,samples=3,judge_model=m1,judge-model=m2,"
        "thinking_budget=judge=0,max_cost_usd=0.5,priority=low"
    )
    assert name == "pro"
    assert keywords == {
        "template": "fluency",
        "samples": 3,
        "judge_models": ["m1", "m2"],
        "thinking": {"judge": 0},
        "max_cost_usd": 0.5,
        "priority": "low",
    }


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("nocolon", "expected NAME:KEY=VALUE"),
        ("x:colour=red", "setup 'x': unknown key 'colour'"),
        ("x:samples=three", "setup 'x': --samples: must be a whole number"),
        ("x:samples=0", "setup 'x': --samples: must be a whole number from 1"),
        ("x:priority=urgent", "setup 'x': priority"),
        ("x:template", "expected KEY=VALUE"),
    ],
)
def test_a_bad_setup_names_itself_and_its_key(spec: str, words: str) -> None:
    with pytest.raises(click.BadParameter) as caught:
        setup_keywords(spec)
    assert words in caught.value.message
