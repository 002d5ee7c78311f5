"""The calibration's figures on rows built here: each setup's agreement checked against scipy
on the rows it should use, bad and missing labels and unscored rows counted and named (never
a 0 or a 1), the paired difference and Holm's p, and the best-per-cost rule."""

from __future__ import annotations

from typing import Any

import pytest
from scipy import stats as sp

from evalq.core.human.calibration import (
    BAD_LABEL,
    NO_LABEL,
    UNSCORED,
    SetupRows,
    calibration,
    calibration_dict,
    read_label,
)
from evalq.stats.multiple import holm
from tests.support.calibration_setups import HUMAN, RATINGS_A, RATINGS_B, setup_rows


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
