"""Gecko's options (gecko-image and gecko-video): the validator's calls, the rubric writer,
and what a row's own questions do. Read by the metric through validator_mode, questions_mode
and rubric_model; this model is what the command line and the API check them against."""

from __future__ import annotations

from typing import Annotated, Literal

from evalq.core.options import Flag, MetricOptions


class GeckoOptions(MetricOptions):
    validator: Annotated[
        Literal["per-question", "batched"] | None,
        Flag("Gecko: one validator call per question (default) or one per row."),
    ] = None
    rubric_model: Annotated[
        str | None,
        Flag("Gecko: the model that writes the rubrics (default: the first judge)."),
    ] = None
    questions: Annotated[
        Literal["replace", "extend"] | None,
        Flag(
            "Gecko: a row's own questions replace the generated rubric (default) "
            "or are added to it."
        ),
    ] = None
