"""Agreement between evalq's judge and human raters: one import for every statistic the
calibration and agreement reports show, each an Estimate (value, bootstrap 95% interval, n,
method, why-None note).

- Row level: spearman, kendall (tau-b) between row scores and human ratings
  (evalq.stats.rank_correlation); spearman_value, the value alone, for a statistic resampled
  by a bootstrap of its own.
- Pairs within a prompt or group: pairwise_accuracy as the Gecko paper uses it, ties per
  Deutsch et al. 2023, tie-calibrated (evalq.stats.pairwise_accuracy).
- Labels (questions, sentences, preferences): label_accuracy, cohen_kappa, weighted for
  ordered categories (evalq.stats.human_labels).
- Two judge setups on the same rows: paired_difference and its p-value
  (evalq.stats.paired_bootstrap).

All are pure and deterministic for a given seed (numpy's default_rng): the same labels give
the same report.
"""

from __future__ import annotations

from evalq.stats.estimate import RESAMPLES, SEED, Estimate
from evalq.stats.human_labels import cohen_kappa, label_accuracy
from evalq.stats.paired_bootstrap import (
    PairedBootstrap,
    paired_difference,
    paired_difference_p,
    paired_difference_test,
)
from evalq.stats.pairwise_accuracy import pairwise_accuracy
from evalq.stats.rank_correlation import kendall, spearman, spearman_value

__all__ = [
    "RESAMPLES",
    "SEED",
    "Estimate",
    "PairedBootstrap",
    "cohen_kappa",
    "kendall",
    "label_accuracy",
    "paired_difference",
    "paired_difference_p",
    "paired_difference_test",
    "pairwise_accuracy",
    "spearman",
    "spearman_value",
]
