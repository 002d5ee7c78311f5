"""The rating metrics' options (pointwise, pairwise; ranking adds its own): the rubric
template, by name or as a file's text, and how many times each row is judged."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

from evalq.core.options import Flag, MetricOptions
from evalq.core.repeats import SAMPLES_HELP, budget_of
from evalq.metrics.ratings.rubrics import rubric_listing


def _known_samples(value: int | str | None) -> int | str | None:
    from evalq.core.errors import DatasetError

    try:
        budget_of(value)
    except DatasetError:
        raise PydanticCustomError("samples", "must be {what}", {"what": SAMPLES_HELP}) from None
    return value


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
    samples: Annotated[
        int | str | None,
        AfterValidator(_known_samples),
        Flag(
            "Pointwise/pairwise/rank: judge each row K times, or 'auto' to ask again only "
            "while the verdict is undecided (at most 8 times; 'auto:N' at most N)."
        ),
    ] = None
    temperature: int | float | None = None  # default: 0 for one sample, 0.7 for several
