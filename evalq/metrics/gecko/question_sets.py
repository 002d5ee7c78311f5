"""Which metric a dataset's question sets are written for (`evalq rubrics`): the one whose judged
column the dataset has (gecko-video for `video`, gecko-image for `image`, rubric for a text
`response`), else gecko-image."""

from __future__ import annotations

from collections.abc import Collection

# The column each question-set metric judges, and the metric, in the order they are tried.
MEDIA_METRICS: tuple[tuple[str, str], ...] = (
    ("video", "gecko-video"),
    ("image", "gecko-image"),
    ("response", "rubric"),
)
DEFAULT_METRIC = "gecko-image"


def metric_for_columns(columns: Collection[str]) -> str:
    """gecko-video for a `video` column, gecko-image for `image`, rubric for `response`, else
    gecko-image."""
    for column, metric in MEDIA_METRICS:
        if column in columns:
            return metric
    return DEFAULT_METRIC
