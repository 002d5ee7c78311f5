"""Groundedness's options: the model under test that writes the responses a row lacks, and
its prompt template. Ranking generates candidates with the same two."""

from __future__ import annotations

from typing import Annotated

from evalq.core.options import Flag, MetricOptions
from evalq.core.repeats import SAMPLES_FLAG_HELP, SamplesOption


class GroundednessOptions(MetricOptions):
    candidate_model: Annotated[
        str | None,
        Flag("Groundedness/ranking: the model under test that writes responses."),
    ] = None
    prompt_template: Annotated[
        str | None,
        Flag(
            "Groundedness/ranking: the candidate prompt template ({query}, {context}).",
            file="text",
        ),
    ] = None
    samples: Annotated[SamplesOption, Flag(SAMPLES_FLAG_HELP)] = None
