"""The rubric metric's options: Gecko's (validator mode, rubric writer, a row's own tests,
another job's tests, soft scores, samples) and the guidelines the rubric writer follows."""

from __future__ import annotations

from typing import Annotated

from evalq.core.options import Flag
from evalq.metrics.gecko.options import GeckoOptions
from evalq.metrics.rubric.guidelines import guideline_listing


class RubricOptions(GeckoOptions):
    guidelines: Annotated[
        str | None,
        Flag(
            "Rubric: what the rubric model writes tests for: built-in guidelines (listed "
            "below) or a text file of your own.",
            file="text-or-name",
            text_into="guidelines_text",
            listing=guideline_listing(),
            listing_title="Built-in rubric guidelines (--guidelines NAME)",
        ),
    ] = None
    guidelines_text: str | None = None  # a guidelines file's text (--guidelines FILE)
