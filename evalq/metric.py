"""Everything a metric's author imports, in one place: the base with its defaults, the plan and
unit types, the verdicts, the request a judge is asked, and the parts of a report view."""

from __future__ import annotations

from evalq.core.errors import InputError
from evalq.core.judge import JudgeRequest
from evalq.core.label_reading import HumanLabels
from evalq.core.metric import Metric, Plan, RowContext, Unit
from evalq.core.metric_base import MetricBase, Text
from evalq.core.models import QuestionResult, RowInput, RowResult, Verdict
from evalq.core.options import Flag, MetricOptions
from evalq.core.prompting import data_rule, delimit
from evalq.core.registry import MetricEntry
from evalq.core.row_value import RowValue
from evalq.core.row_view import VerdictLine, ViewParts, texts_of
from evalq.core.verdicts import unscored

__all__ = [
    "Flag",
    "HumanLabels",
    "InputError",
    "JudgeRequest",
    "Metric",
    "MetricBase",
    "MetricEntry",
    "MetricOptions",
    "Plan",
    "QuestionResult",
    "RowContext",
    "RowInput",
    "RowResult",
    "RowValue",
    "Text",
    "Unit",
    "Verdict",
    "VerdictLine",
    "ViewParts",
    "data_rule",
    "delimit",
    "texts_of",
    "unscored",
]
