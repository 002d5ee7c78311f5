"""evalq: model-as-judge evaluations (Gecko, groundedness, pointwise, pairwise) on Celery + Redis.

The Python API: `evalq.evaluate(frame_or_path, metric, ...)` returns a `Job`; see evalq.client.api.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Job", "evaluate"]

if TYPE_CHECKING:
    from evalq.client.api import Job, evaluate


def __getattr__(name: str) -> Any:
    # Lazy, so `import evalq.core.models` in a worker does not pull in pandas and the client.
    if name in ("evaluate", "Job"):
        from evalq.client import api

        return getattr(api, name)
    raise AttributeError(name)
