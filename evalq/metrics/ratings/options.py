"""The rating metrics' options (pointwise, pairwise; ranking adds its own): the rubric
template, by name or as a file's text, and how many times each row is judged."""

from __future__ import annotations

from typing import Annotated

from evalq.core.options import Flag, MetricOptions
from evalq.core.repeats import SAMPLES_FLAG_HELP, SamplesOption
from evalq.metrics.ratings.rubrics import rubric_listing


class RatingOptions(MetricOptions):
    template: Annotated[
        str | None,
        Flag(
            "Pointwise/pairwise/rank: a built-in rating template (listed below) or a "
            "template file of your own.",
            file="text-or-name",
            text_into="template_text",
            listing=rubric_listing(),
            listing_title="Built-in rating templates (--template NAME)",
        ),
    ] = None
    template_text: str | None = None  # a template file's text (--template FILE)
    samples: Annotated[SamplesOption, Flag(SAMPLES_FLAG_HELP)] = None
    temperature: int | float | None = None  # default: 0 for one sample, 0.7 for several
