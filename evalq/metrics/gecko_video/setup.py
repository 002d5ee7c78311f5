"""gecko-video's judge setup: Gecko's (evalq.metrics.gecko.setup) with the video rubric and
validator templates."""

from __future__ import annotations

from typing import Any

from evalq.core.models import JobConfig
from evalq.metrics.gecko.setup import gecko_setup
from evalq.metrics.gecko_video.metric import VIDEO_RUBRIC, VIDEO_VALIDATOR


def video_setup(job: JobConfig) -> dict[str, Any]:
    return gecko_setup(job, VIDEO_RUBRIC, VIDEO_VALIDATOR)
