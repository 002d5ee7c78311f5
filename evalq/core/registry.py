"""The metrics evalq knows, by name: a module of its own, importing nothing, so the command line
can list them (its argument choices) without loading pydantic models or a metric's code."""

from __future__ import annotations

# name -> "module:attribute"; imported on first use (evalq.core.metric.get_metric) so a
# metric's dependencies load lazily.
REGISTRY: dict[str, str] = {
    "gecko-image": "evalq.metrics.gecko.metric:GECKO_IMAGE",
    "gecko-video": "evalq.metrics.gecko_video.metric:GECKO_VIDEO",
    "groundedness": "evalq.metrics.groundedness.metric:GROUNDEDNESS",
    "pointwise": "evalq.metrics.pointwise.metric:POINTWISE",
    "pairwise": "evalq.metrics.pairwise.metric:PAIRWISE",
    "rank": "evalq.metrics.ranking.metric:RANK",
}

# name -> "module:class" of the metric's options model (evalq.core.options); light modules, so
# the command line builds its flags from them without loading the metrics.
OPTIONS: dict[str, str] = {
    "gecko-image": "evalq.metrics.gecko.options:GeckoOptions",
    "gecko-video": "evalq.metrics.gecko.options:GeckoOptions",
    "groundedness": "evalq.metrics.groundedness.options:GroundednessOptions",
    "pointwise": "evalq.metrics.ratings.options:RatingOptions",
    "pairwise": "evalq.metrics.ratings.options:RatingOptions",
    "rank": "evalq.metrics.ranking.options:RankOptions",
}

# name -> "module:function" that says how the metric's judges are set up (prompt template
# versions, validator mode, samples...) from the job's config, for JobSummary.judge_setup
# (evalq.core.metric.metric_setup). Each lives in its metric's package, beside its prompts.
SETUPS: dict[str, str] = {
    "gecko-image": "evalq.metrics.gecko.setup:image_setup",
    "gecko-video": "evalq.metrics.gecko_video.setup:video_setup",
    "groundedness": "evalq.metrics.groundedness.setup:groundedness_setup",
    "pointwise": "evalq.metrics.ratings.setup:pointwise_setup",
    "pairwise": "evalq.metrics.ratings.setup:pairwise_setup",
    "rank": "evalq.metrics.ratings.setup:pairwise_setup",
}
