"""Gecko's options (gecko-image and gecko-video): the validator's calls, the rubric writer,
what a row's own questions do, another job's questions, and soft scores. Read by the metric through validator_mode,
questions_mode, rubric_model and soft_mode; this model is what the command line and the API
check them against."""

from __future__ import annotations

from typing import Annotated, Literal

from evalq.core.options import Flag, MetricOptions
from evalq.core.repeats import SAMPLES_FLAG_HELP, SamplesOption


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
    soft: Annotated[
        bool | None,
        Flag(
            "Gecko: score each yes/no question by the probability the validator gives the "
            "expected answer (needs a judge that returns log probabilities)."
        ),
    ] = None
    questions_from: Annotated[
        str | None,
        Flag(
            "Gecko: ask every row exactly the questions job JOB (its id, a unique id prefix or "
            "its --name) asked for its prompt, as if the dataset's questions column held them "
            "(with --questions replace)."
        ),
    ] = None
    samples: Annotated[SamplesOption, Flag(SAMPLES_FLAG_HELP)] = None
