"""The metrics evalq knows, by name: evalq's own, listed here, and any an installed package
declares under the `evalq.metrics` entry point group (docs/architecture/adding-a-metric.md).

A module of its own importing nothing heavy, so the command line can list the metrics (its
argument choices) without loading pydantic models or a metric's code: an entry names its
parts as "module:attribute" strings, imported on first use.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points

ENTRY_POINT_GROUP = "evalq.metrics"


@dataclass(frozen=True)
class MetricEntry:
    """Where a metric's parts are. ``metric``: the object implementing evalq.core.metric.Metric.
    ``options``: its options model (evalq.core.options.MetricOptions), light, so the command
    line builds its flags from it without loading the metric. ``setup``: a function saying
    how the job's judges were set up (JobSummary.judge_setup), or None for a metric that says
    nothing beyond the judge models and thinking."""

    metric: str
    options: str = "evalq.core.options:MetricOptions"
    setup: str | None = None


BUILT_IN: dict[str, MetricEntry] = {
    "gecko-image": MetricEntry(
        "evalq.metrics.gecko.metric:GECKO_IMAGE",
        "evalq.metrics.gecko.options:GeckoOptions",
        "evalq.metrics.gecko.setup:image_setup",
    ),
    "gecko-video": MetricEntry(
        "evalq.metrics.gecko_video.metric:GECKO_VIDEO",
        "evalq.metrics.gecko.options:GeckoOptions",
        "evalq.metrics.gecko_video.setup:video_setup",
    ),
    "groundedness": MetricEntry(
        "evalq.metrics.groundedness.metric:GROUNDEDNESS",
        "evalq.metrics.groundedness.options:GroundednessOptions",
        "evalq.metrics.groundedness.setup:groundedness_setup",
    ),
    "pointwise": MetricEntry(
        "evalq.metrics.pointwise.metric:POINTWISE",
        "evalq.metrics.ratings.options:RatingOptions",
        "evalq.metrics.ratings.setup:pointwise_setup",
    ),
    "pairwise": MetricEntry(
        "evalq.metrics.pairwise.metric:PAIRWISE",
        "evalq.metrics.ratings.options:RatingOptions",
        "evalq.metrics.ratings.setup:pairwise_setup",
    ),
    "rubric": MetricEntry(
        "evalq.metrics.rubric.metric:RUBRIC",
        "evalq.metrics.rubric.options:RubricOptions",
        "evalq.metrics.rubric.metric:rubric_setup",
    ),
    "rank": MetricEntry(
        "evalq.metrics.ranking.metric:RANK",
        "evalq.metrics.ranking.options:RankOptions",
        "evalq.metrics.ratings.setup:pairwise_setup",
    ),
}


@cache
def metrics() -> dict[str, MetricEntry]:
    """Every metric by name: evalq's own first, then the installed packages'. A package's
    entry point names a MetricEntry; one that names an evalq metric's name, or is not a
    MetricEntry, is refused by name rather than shadowing or half-loading."""
    found = dict(BUILT_IN)
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        if point.name in BUILT_IN:
            raise RuntimeError(
                f"the installed package {point.value!r} declares a metric named {point.name!r} "
                f"({ENTRY_POINT_GROUP} entry point); evalq has a metric of that name"
            )
        entry = point.load()
        if not isinstance(entry, MetricEntry):
            raise RuntimeError(
                f"the {ENTRY_POINT_GROUP} entry point {point.name!r} = {point.value!r} names "
                f"a {type(entry).__name__}, not an evalq.core.registry.MetricEntry"
            )
        found[point.name] = entry
    return found


def metric_names() -> list[str]:
    """The metrics' names, sorted (the command line's choices)."""
    return sorted(metrics())
