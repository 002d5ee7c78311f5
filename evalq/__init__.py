"""evalq: model-as-judge evaluations (Gecko, groundedness, pointwise, pairwise) on Celery + Redis.

The Python API: `evalq.evaluate(frame_or_path, metric, ...)` returns a `Job`; see evalq.client.api.
`evalq.compare(job_a, job_b, ...)` compares jobs on their shared rows; see evalq.client.compare.
`evalq.calibrate(data, human=..., setups={...})` ranks judge setups; see evalq.client.calibrate.
`evalq.history(metric=..., since="30d")` is many jobs' rows as one DataFrame, from Redis and the
archive; see evalq.client.history.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Job", "calibrate", "compare", "evaluate", "history"]

if TYPE_CHECKING:
    from evalq.client.api import Job, evaluate
    from evalq.client.calibrate import calibrate
    from evalq.client.compare import compare
    from evalq.client.history import history


def __getattr__(name: str) -> Any:
    # Lazy, so `import evalq.core.models` in a worker does not pull in pandas and the client.
    if name in ("evaluate", "Job"):
        from evalq.client import api

        return getattr(api, name)
    if name == "calibrate":
        from evalq.client.calibrate import calibrate

        return calibrate
    if name == "history":
        from evalq.client.history import history

        return history
    if name == "compare":
        from evalq.client.compare import compare

        return compare
    raise AttributeError(name)
