"""The noise floor's statistics, checked against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from evalq.stats.intervals import wilson
from evalq.stats.noise import (
    effective_judges,
    mean_noise_se,
    order_disagreement,
    panel_errors,
    split_share,
)


def test_split_share_counts_units_whose_samples_differ() -> None:
    units = [["yes", "yes"], ["yes", "no"], ["no", "no", "no"], ["no", "yes", "no"], ["yes"]]
    share = split_share(units)
    assert share is not None
    # Four units have two samples or more; two of them are split; the single one is left out.
    assert (share.value, share.n) == (0.5, 4)
    assert share.ci95 == wilson(2, 4)
    assert split_share([["yes"], []]) is None


def test_order_disagreement_compares_what_each_order_settles_on() -> None:
    units = [
        {"AB": ["A"], "BA": ["A"]},  # agree
        {"AB": ["A"], "BA": ["B"]},  # disagree
        {"AB": ["A", "A", "B"], "BA": ["A", "B", "A"]},  # both settle on A: agree
        {"AB": ["A", "B"], "BA": ["A", "A"]},  # AB split within itself: disagree
        {"AB": ["tie"]},  # one order only: not compared
    ]
    share = order_disagreement(units)
    assert share is not None
    assert (share.value, share.n) == (0.5, 4)
    assert order_disagreement([{"AB": ["A"]}]) is None


def test_effective_judges_is_kishs_design_effect() -> None:
    assert effective_judges(6, 0.0) == 6.0
    assert effective_judges(6, 1.0) == 1.0
    # k = 6, rho = 0.44: 6 / (1 + 5 * 0.44) = 6 / 3.2 = 1.875
    assert effective_judges(6, 0.44) == pytest.approx(1.875)
    assert effective_judges(3, -0.5) is None  # 1 + 2 * -0.5 = 0


def test_panel_errors_average_the_pairs_correlations() -> None:
    # a and b err together exactly (r = 1); c's errors are a's reversed (r = -1 with a and b).
    errors = {
        "a": {1: 1.0, 2: -1.0, 3: 0.0},
        "b": {1: 2.0, 2: -2.0, 3: 0.0},
        "c": {1: -1.0, 2: 1.0, 3: 0.0},
    }
    figures = panel_errors(errors)
    assert figures is not None
    assert figures.mean_correlation == pytest.approx((1 - 1 - 1) / 3)
    assert (figures.judges, figures.units, figures.pairs) == (3, 3, 3)
    # 3 / (1 + 2 * -1/3) = 9
    assert figures.effective_judges == pytest.approx(9.0)


def test_panel_errors_leave_out_pairs_with_no_variation_and_need_two_judges() -> None:
    errors = {"a": {1: 1.0, 2: 0.0}, "b": {1: 1.0, 2: 0.0}, "c": {1: 0.0, 2: 0.0}}
    figures = panel_errors(errors)
    assert figures is not None
    assert (figures.pairs, figures.mean_correlation, figures.effective_judges) == (1, 1.0, 1.0)
    assert panel_errors({"a": {1: 1.0}}) is None


def test_mean_noise_se_by_hand() -> None:
    # Row 1: one unit (0, 1): s2 = 0.5, over m = 2: 0.25; one unit, so the row's variance 0.25.
    # Row 2: units (1, 1) (s2 = 0) and (0.5) (one sample: the pooled s2 = (0.5 + 0) / 2 = 0.25,
    # over m = 1): (0 + 0.25) / 2^2 = 0.0625. Mean of 2 rows: sqrt(0.25 + 0.0625) / 2.
    rows = [[[0.0, 1.0]], [[1.0, 1.0], [0.5]]]
    assert mean_noise_se(rows) == pytest.approx(math.sqrt(0.3125) / 2)


def test_mean_noise_se_is_none_without_a_repeated_unit() -> None:
    assert mean_noise_se([[[1.0]], [[0.0]]]) is None
    assert mean_noise_se([[[1.0, 1.0]], []]) == 0.0  # a row with no sample is not in the mean
