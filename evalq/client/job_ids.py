"""Job ids: made by the client, checked before one reaches Redis. A module of its own so the
command line checks an id without loading the client."""

from __future__ import annotations

import re
import uuid

from evalq.core.errors import JobNotFound

JOB_ID = re.compile(r"[0-9a-f]{12}")


def new_job_id() -> str:
    return uuid.uuid4().hex[:12]


def check_job_id(job_id: str) -> str:
    """Refuse what new_job_id could not have made before it reaches Redis: the id becomes part
    of key names, so `X:row:Y` would read some other key (of another type, or another job's)."""
    if not isinstance(job_id, str) or not JOB_ID.fullmatch(job_id):
        raise JobNotFound(
            f"{job_id!r} is not a job id: a job id is 12 hex digits (0-9, a-f), "
            "as `evalq run` and `evalq jobs` print it"
        )
    return job_id
