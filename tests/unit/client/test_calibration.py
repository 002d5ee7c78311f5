"""evalq calibrate's figures on rows built here: each setup's agreement checked against scipy
on the rows it should use, bad and missing labels and unscored rows counted and named (never
a 0 or a 1), the paired difference and Holm's p, the best-per-cost rule, the API's frames,
the table within 80 columns and the HTML page escaped."""

from __future__ import annotations

import io
import math
from typing import Any

import click
import pytest
from rich.console import Console
from scipy import stats as sp

from evalq.client.calibrate import frames
from evalq.client.calibrate_render import print_calibration, render_calibration_html
from evalq.client.calibration import (
    BAD_LABEL,
    NO_LABEL,
    UNSCORED,
    SetupRows,
    calibration,
    calibration_dict,
    read_label,
)
from evalq.client.cli.calibrate import setup_keywords
from evalq.core.models import JobSummary, RowResult
from evalq.stats.multiple import holm
from tests.support.summaries import job_summary

HUMAN = [5, 4, 4, 3, 2, 1, 5, 3, 2, 1, 4, 2]
# A's ratings follow the labels but for one swap; B's barely do.
RATINGS_A = [5, 4, 3, 3, 2, 1, 5, 3, 2, 2, 4, 1]
RATINGS_B = [3, 5, 2, 4, 5, 3, 2, 5, 4, 3, 1, 5]


def summary(job_id: str, **overrides: Any) -> JobSummary:
    return job_summary(15, **({"job_id": job_id, "dataset": "/data/labelled.jsonl"} | overrides))


def row(i: int, rating: float | None, label: Any) -> RowResult:
    extra = {} if label is ... else {"human": label}
    return RowResult(
        id=f"r{i}",
        line=i + 1,
        prompt=f"prompt {i // 3}",
        status="scored" if rating is not None else "failed",
        score=None if rating is None else (rating - 1) / 4,
        extra=extra,
    )


def setup_rows(name: str, ratings: list[int], cost: float | None = 0.03) -> SetupRows:
    rows = [row(i, r, h) for i, (r, h) in enumerate(zip(ratings, HUMAN, strict=True))]
    # Three rows that must be left out: no label, a label that is no number, an unscored row.
    rows += [row(12, 3, ...), row(13, 3, "great"), row(14, None, 4)]
    return SetupRows(name, summary(f"{name}job", cost_usd=cost), rows)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (4, (4.0, None)),
        ("4", (4.0, None)),
        (" 2.5 ", (2.5, None)),
        ("Yes", (1.0, None)),
        ("no", (0.0, None)),
        (True, (1.0, None)),
        (None, (None, NO_LABEL)),
        ("", (None, NO_LABEL)),
        ("n/a", (None, BAD_LABEL)),
        (float("nan"), (None, BAD_LABEL)),
        ("inf", (None, BAD_LABEL)),
        ([3], (None, BAD_LABEL)),
    ],
)
def test_labels_read_as_numbers_or_left_out_with_a_reason(value: Any, expected: Any) -> None:
    assert read_label(value) == expected


def test_each_setup_agrees_as_scipy_says_on_the_rows_it_may_use() -> None:
    result = calibration([setup_rows("a", RATINGS_A), setup_rows("b", RATINGS_B)], "human")
    a, b = result.setups
    for setup, ratings in ((a, RATINGS_A), (b, RATINGS_B)):
        assert setup.used == 12 and setup.rows == 15
        assert setup.left_out == {NO_LABEL: 1, BAD_LABEL: 1, UNSCORED: 1}
        assert setup.left_out_ids == {NO_LABEL: ["r12"], BAD_LABEL: ["r13"], UNSCORED: ["r14"]}
        rho = sp.spearmanr(ratings, HUMAN).statistic
        tau = sp.kendalltau(ratings, HUMAN, variant="b").statistic
        assert setup.spearman.value == pytest.approx(rho)
        assert setup.kendall.value == pytest.approx(tau)
        assert setup.spearman.ci95 is not None
        assert setup.pairwise.n == 12  # four prompts of three rows: three pairs each
        assert setup.cost_per_row_usd == pytest.approx(0.03 / 15)
    (diff,) = result.differences
    assert (diff.a, diff.b) == ("a", "b")
    rho_a, rho_b = sp.spearmanr(RATINGS_A, HUMAN), sp.spearmanr(RATINGS_B, HUMAN)
    assert diff.difference.value == pytest.approx(rho_a.statistic - rho_b.statistic)
    assert diff.difference.n == 12
    assert diff.p_value is not None and diff.p_holm == diff.p_value  # one pair: Holm is p
    assert diff.significant
    assert result.most_agreeing == "a" and result.best_per_cost == "a"


def test_holm_runs_across_every_pair_of_setups() -> None:
    setups = [setup_rows("a", RATINGS_A), setup_rows("b", RATINGS_B), setup_rows("c", HUMAN)]
    result = calibration(setups, "human", resamples=500)
    assert [(d.a, d.b) for d in result.differences] == [("a", "b"), ("a", "c"), ("b", "c")]
    assert [d.p_holm for d in result.differences] == holm([d.p_value for d in result.differences])
    assert result.most_agreeing == "c"


def test_best_per_cost_is_the_cheapest_not_significantly_worse() -> None:
    # a agrees a bit less than c, not significantly; a costs less: a is best per unit of cost.
    slightly_off = list(HUMAN)
    slightly_off[0], slightly_off[1] = 4, 5
    setups = [
        setup_rows("a", slightly_off, cost=0.01),
        setup_rows("b", RATINGS_B, cost=0.001),
        setup_rows("c", HUMAN, cost=0.3),
    ]
    result = calibration(setups, "human", resamples=500)
    assert result.most_agreeing == "c"
    assert result.best_per_cost == "a", calibration_dict(result)
    assert "cheapest" in result.best_per_cost_why


def test_unknown_cost_is_never_cheapest() -> None:
    setups = [setup_rows("a", RATINGS_A, cost=None), setup_rows("b", RATINGS_A, cost=None)]
    result = calibration(setups, "human", resamples=200)
    assert result.best_per_cost is None
    assert "cost unknown for a, b" in result.best_per_cost_why
    assert result.setups[0].cost_kind == "unknown"
    assert calibration_dict(result)["setups"][0]["cost_per_row_usd"] is None


def test_group_by_pairs_rows_by_that_column_and_counts_rows_without_it() -> None:
    a, b = setup_rows("a", RATINGS_A), setup_rows("b", RATINGS_B)
    for s in (a, b):
        for r in s.rows:
            if r.id != "r0":
                r.extra["batch"] = "x" if int(r.id[1:]) % 2 else "y"
    result = calibration([a, b], "human", group_by="batch", resamples=200)
    first = result.setups[0]
    # 11 labelled, scored rows have a batch: 5 odd (x) and 6 even (y) -> 10 + 15 pairs.
    assert first.pairwise.n == 25
    assert first.used == 12
    assert any(ids == ["r0"] for ids in first.left_out_ids.values())


def test_api_frames_one_row_per_setup_and_pair() -> None:
    result = calibration([setup_rows("a", RATINGS_A), setup_rows("b", RATINGS_B)], "human")
    out = frames(result, {"a": "ajob", "b": "bjob"})
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
        ("x:samples=three", "setup 'x': samples"),
        ("x:samples=0", "setup 'x': --samples: must be at least 1"),
        ("x:priority=urgent", "setup 'x': priority"),
        ("x:template", "expected KEY=VALUE"),
    ],
)
def test_a_bad_setup_names_itself_and_its_key(spec: str, words: str) -> None:
    with pytest.raises(click.BadParameter) as caught:
        setup_keywords(spec)
    assert words in caught.value.message


def test_a_template_that_keeps_the_prompt_as_extra_pairs_the_same_rows() -> None:
    """A setup whose template does not read the prompt (fluency) keeps it as an extra column:
    its rows still pair by prompt, the same pairs as a setup that reads it."""
    reads, keeps = setup_rows("reads", RATINGS_A), setup_rows("keeps", RATINGS_B)
    keeps = SetupRows(
        keeps.name,
        keeps.summary,
        [
            r.model_copy(update={"prompt": "", "extra": {**r.extra, "prompt": r.prompt}})
            for r in keeps.rows
        ],
    )
    result = calibration([reads, keeps], "human", resamples=200)
    assert result.setups[0].pairwise.n == result.setups[1].pairwise.n > 0
