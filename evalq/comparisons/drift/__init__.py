"""Drift: one set of inputs judged twice, each figure set beside the judge's own noise."""

from evalq.comparisons.drift.build import drift_report
from evalq.comparisons.drift.report import DriftReport

__all__ = ["DriftReport", "drift_report"]
