"""Ranking's options: the rating options (template, samples), candidate generation as in
groundedness, the candidates' own guidance, and the bootstrap behind the intervals."""

from __future__ import annotations

from pydantic import Field

from evalq.metrics.groundedness.options import GroundednessOptions
from evalq.metrics.ratings.options import RatingOptions


class RankOptions(RatingOptions, GroundednessOptions):
    candidate_prompts: dict[str, str] | None = None  # name -> guidance (--candidate-prompts)
    bootstrap: int | None = Field(default=None, ge=0)  # resamples behind the intervals
    seed: int | None = Field(default=None, ge=0)
