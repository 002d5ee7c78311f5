"""Which Gecko metric a dataset's question sets are written for (`evalq rubrics`): the one whose
media column the dataset has, gecko-video for a `video` column, else gecko-image."""

from __future__ import annotations

from collections.abc import Collection

# The media column each Gecko metric judges, and the metric; the first is the default.
MEDIA_METRICS: tuple[tuple[str, str], ...] = (("video", "gecko-video"), ("image", "gecko-image"))
DEFAULT_METRIC = "gecko-image"


def metric_for_columns(columns: Collection[str]) -> str:
    """gecko-video when the dataset has a `video` column, else gecko-image."""
    for column, metric in MEDIA_METRICS:
        if column in columns:
            return metric
    return DEFAULT_METRIC
