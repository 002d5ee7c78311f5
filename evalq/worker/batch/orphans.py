"""A batch whose job is gone from Redis is cancelled on the server: nothing would read its
results, and it would run to its end and be billed. Its ledger went with the job, so it is
found by the display name it was created under."""

from __future__ import annotations

import logging

from evalq.worker.batch.ledger import TERMINAL
from evalq.worker.batch.service import backend_for, display_name
from evalq.worker.settings import Settings

log = logging.getLogger(__name__)
_SEARCHED = 500  # the newest batches of the account looked through, as for adopting one


def cancel_orphan(settings: Settings, job_id: str, batch_id: str) -> str | None:
    """Cancel the gone job's batch if it still runs; returns its server name when cancelled."""
    backend = backend_for(settings)
    wanted = display_name(job_id, batch_id)
    for view in backend.list(_SEARCHED):
        if view.display_name != wanted or not view.name:
            continue
        if view.state in TERMINAL:
            return None
        backend.cancel(view.name)
        log.warning("job %s is gone: cancelled its batch %s (%s)", job_id, view.name, batch_id)
        return view.name
    return None
