"""The judge's noise floor of a job (JobSummary.noise_floor), a contract between processes
like the rest of evalq.core.models, which re-exports it; kept apart for size."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

NOISE_Z = 1.96  # a difference within NOISE_Z judge-noise standard errors is within the floor


class Model(BaseModel):
    model_config = ConfigDict(defer_build=True)


class PanelNoise(Model):
    """How far a panel of judges errs together, against `reference`: the mean correlation of
    their errors over pairs of judges, and the number of independent judges it is worth
    (Kish's effective n). The figures are None, and `note` says why, without a reference."""

    judges: list[str]
    units: int = 0  # units every figure below is read from
    reference: str | None = None  # what an error is measured against (a --human column)
    error_correlation: float | None = None
    effective_judges: float | None = None
    note: str | None = None


class NoiseFloor(Model):
    """The judge's test-retest figures, from the job's repeated units (evalq.stats.noise).

    Every share is out of its own count of units; a figure the job's repeats cannot give is
    None."""

    units: int  # repeated units with at least two answered samples
    samples: int  # answered samples of those units
    undecided: int = 0  # verdicts still split at their maximum (a split vote)
    split_share: float | None = None  # units whose samples do not all agree
    split_ci95: tuple[float, float] | None = None
    # Krippendorff's alpha across samples: interval for ratings, nominal for answers.
    alpha: float | None = None
    alpha_level: Literal["nominal", "interval"] | None = None
    # Pairwise: units whose answers in the two orders (AB, BA) settle on different sides.
    order_units: int = 0
    order_disagreement: float | None = None
    order_ci95: tuple[float, float] | None = None
    # The standard error the mean score has from the judge's re-asking alone, and its 95%
    # band (NOISE_Z of them): a difference between two jobs' means inside either job's band
    # is within the judge's noise.
    mean_score_noise_se: float | None = None
    mean_score_noise_margin: float | None = None
    panel: PanelNoise | None = None
