"""evalq: model-as-judge evaluations (Gecko, groundedness, pointwise, pairwise) on Celery + Redis.
The Python API: `evaluate` (and `regrade`) return a `Job`; `compare`, `drift`, `calibrate` and
`history` read jobs back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Job", "calibrate", "compare", "drift", "evaluate", "history", "regrade"]

if TYPE_CHECKING:
    from evalq.client.api import Job, evaluate, regrade
    from evalq.client.calibrate import calibrate
    from evalq.client.compare import compare
    from evalq.client.drift import drift
    from evalq.client.history import history


def __getattr__(name: str) -> Any:
    # Lazy, so `import evalq.core.models` in a worker does not pull in pandas and the client.
    if name in ("evaluate", "Job", "regrade"):
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
    if name == "drift":
        from evalq.client.drift import drift

        return drift
    raise AttributeError(name)
