"""What a drift report says (`evalq drift OLD NEW`, `evalq.drift`): the same inputs judged by two
judges, every figure beside the judge's own noise, in one model that JSON, the terminal and the
HTML page all read."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from evalq.core.models import Model

Bounds = tuple[float, float]
Scale = Literal["ordinal", "nominal"]
NoiseSource = Literal["repeats", "retest", "none"]


class Change(Model):
    """One way verdicts changed ("4" to "5", "yes" to "no", "A" to "B") and on how many units."""

    before: str
    after: str
    units: int


class Kappa(Model):
    """Cohen's kappa between the two judges' verdicts (quadratic weights for ratings), with its
    95% percentile bootstrap interval; None where undefined (`note` says why)."""

    value: float | None
    ci95: Bounds | None = None
    method: str = ""
    note: str | None = None


class UnitDrift(Model):
    """The units (a question's answer, a rating, one order of a comparison) both jobs answered:
    how many changed, which way, and how far the two judges agree beyond chance."""

    units: int = 0  # answered on both sides
    changed: int = 0
    share: float | None = None
    ci95: Bounds | None = None  # Wilson 95%
    scale: Scale = "nominal"
    changes: list[Change] = Field(default_factory=list)  # most units first
    kappa: Kappa | None = None
    alpha: float | None = None  # Krippendorff's alpha of the two judges
    alpha_level: Literal["nominal", "interval"] = "nominal"
    # Units left out, by why: unscored on one side or both, or asked on one side only.
    left_out: dict[str, int] = Field(default_factory=dict)


class ScoreChange(Model):
    """The mean change NEW - OLD of the compared row value over the rows both scored, with its
    paired bootstrap interval (BCa, seeded), for all rows or one tag or group."""

    scope: str = "all"  # "all", "tag color", "group category=cats"
    rows: int = 0
    mean_old: float | None = None
    mean_new: float | None = None
    change: float | None = None
    ci95: Bounds | None = None
    ci_method: str | None = None


class Swap(Model):
    """Two candidates the new judge orders the other way round."""

    ahead_before: str
    ahead_after: str


class RankingDrift(Model):
    """How the candidates' order would change: each candidate's mean under each judge,
    Kendall's tau-b between the two orders with a bootstrap interval over rows, the swaps."""

    basis: str  # what a candidate's row value is
    rows: int
    candidates: list[str]
    old_order: list[str]
    new_order: list[str]
    old_means: dict[str, float | None]
    new_means: dict[str, float | None]
    tau: float | None = None
    tau_ci95: Bounds | None = None
    swaps: list[Swap] = Field(default_factory=list)


class ChangedUnit(Model):
    unit: str
    old: str
    new: str


class ChangedRow(Model):
    """A row (a candidate's cell) whose verdicts changed: how many, which, and its two scores."""

    id: str
    line: int
    candidate: str | None = None
    units: int
    changed: int
    score_old: float | None = None
    score_new: float | None = None
    changes: list[ChangedUnit] = Field(default_factory=list)


class Noise(Model):
    """The judge's own noise each figure is set beside: from a retest (the old judge on the
    same rows again), from the repeats of either job, or unknown."""

    source: NoiseSource = "none"
    job_id: str | None = None  # the retest job, or the job whose repeats were read
    units: int = 0
    share: float | None = None  # the share of units one judge answers differently when re-asked
    ci95: Bounds | None = None
    kappa: float | None = None  # retest: the old judge against itself
    alpha: float | None = None
    mean_margin: float | None = None  # the 95% spread of the mean from the judge's noise alone
    # A retest's mean change against the old job (the old judge against itself), on its rows.
    mean_change: float | None = None
    mean_change_ci95: Bounds | None = None
    note: str | None = None


class Verdict(Model):
    """The one line: "drift beyond noise", "within the judge's own noise", or the noise floor
    unknown (`drift` None), with the figures behind it and the rule that decides."""

    drift: bool | None
    line: str
    rule: str
    # The flip share minus the judge's own, its 95% interval (None: the noise is unknown).
    difference_ci95: Bounds | None = None


class HumanSide(Model):
    level: str
    statistic: str
    old: float | None
    new: float | None
    old_ci95: Bounds | None = None
    new_ci95: Bounds | None = None
    labels: int = 0


class HumanVerdict(Model):
    """Which judge agrees better with the people, per level the jobs have labels for."""

    levels: list[HumanSide] = Field(default_factory=list)
    line: str


class DriftReport(Model):
    old_job: str
    new_job: str
    metric: str
    old_judge: str
    new_judge: str
    old_versions: list[str] = Field(default_factory=list)
    new_versions: list[str] = Field(default_factory=list)
    simulated: bool = False
    value: str = ""  # what a row's score is (the metric's compared value, e.g. "mean rating (1-5)")
    rows_paired: int = 0
    rows_only_old: int = 0
    rows_only_new: int = 0
    units: UnitDrift = Field(default_factory=UnitDrift)
    score: ScoreChange = Field(default_factory=ScoreChange)
    tags: list[ScoreChange] = Field(default_factory=list)
    groups: list[ScoreChange] = Field(default_factory=list)
    ranking: RankingDrift | None = None
    changed_rows: list[ChangedRow] = Field(default_factory=list)
    noise: Noise = Field(default_factory=Noise)
    verdict: Verdict
    human: HumanVerdict | None = None
    seed: int = 0
    notes: list[str] = Field(default_factory=list)
