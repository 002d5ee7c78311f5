"""The summary's agreement with human labels (JobSummary.human_agreement), a contract between
processes like the rest of evalq.core.models, which re-exports it; kept apart for size."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Model(BaseModel):
    model_config = ConfigDict(defer_build=True)


HumanLevel = Literal["row", "question", "sentence", "preference"]


class AgreementStat(Model):
    """One agreement statistic with its 95% interval (evalq.stats.human's Estimate): None
    when it cannot be computed, and `note` says why."""

    value: float | None
    ci95: tuple[float, float] | None = None
    n: int = 0  # rows, labels or pairs it is computed over
    method: str = ""
    note: str | None = None


class AgreementFigures(Model):
    """The statistics over one slice of the labels: all of them, one tag, or one group."""

    scope: str = "all"  # "all", "tag color", "group category=cats"
    labels: int = 0  # labels compared (a label and the judge's value both present)
    spearman: AgreementStat | None = None
    kendall: AgreementStat | None = None
    pairwise_accuracy: AgreementStat | None = None
    accuracy: AgreementStat | None = None
    kappa: AgreementStat | None = None


class HumanLevelAgreement(Model):
    """Agreement at one level the metric judges: the row's score, a Gecko question's answer,
    a groundedness sentence's label, a pairwise preference."""

    level: HumanLevel
    source: str  # where the labels come from: "column rating", "questions[].human"...
    judge_value: str  # what of the judge's they are compared with
    labels_used: int
    labels_left_out: int
    left_out_by_reason: dict[str, int] = Field(default_factory=dict)
    left_out_examples: list[str] = Field(default_factory=list)  # the first few, by row
    kappa_weights: str | None = None  # "quadratic" for ordinal ratings, None: unweighted
    pairs_grouped_by: str | None = None  # what rows share to form pairs (pairwise accuracy)
    overall: AgreementFigures
    by_tag: list[AgreementFigures] = Field(default_factory=list)
    by_group: list[AgreementFigures] = Field(default_factory=list)


class HumanAgreement(Model):
    """How well the judge agrees with the dataset's human labels, per level it has labels
    for (evalq.core.human_agreement); `note` says why a level is missing or partial."""

    levels: list[HumanLevelAgreement] = Field(default_factory=list)
    note: str | None = None
