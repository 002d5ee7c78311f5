"""The rating metrics' options (pointwise, pairwise; ranking adds its own): the rubric
template, by name or as a file's text, and how many times each row is judged."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from evalq.core.options import Flag, MetricOptions


class RatingOptions(MetricOptions):
    template: Annotated[
        str | None,
        Flag(
            "Pointwise: a built-in rubric name or a template file.",
            file="text-or-name",
            text_into="template_text",
        ),
    ] = None
    template_text: str | None = None  # a template file's text (--template FILE)
    samples: Annotated[
        int | None, Field(ge=1), Flag("Pointwise/pairwise: judge each row K times.")
    ] = None
    temperature: int | float | None = None  # default: 0 for one sample, 0.7 for several
