"""A batch whose job is gone from Redis (expired, or Redis lost its data) is cancelled on the
server: nothing would ever read its results, and it would run to its end, and be billed. Its
ledger went with the job, so the batch is found by the display name it was created under
(worker.batch.names.display_name), as a batch created just before a crash is adopted."""

from __future__ import annotations

import logging

from google import genai

from worker.batch.ledger import TERMINAL
from worker.batch.names import display_name
from worker.batch.service import client_for
from worker.settings import Settings

log = logging.getLogger(__name__)
_SEARCHED = 500  # the newest batches of the account looked through


def find_on_server(client: genai.Client, job_id: str, batch_id: str) -> tuple[str, str] | None:
    """(server name, state less JOB_STATE_) of the job's batch, or None if not found."""
    wanted = display_name(job_id, batch_id)
    for seen, job in enumerate(client.batches.list(config={"page_size": 100})):
        if job.display_name == wanted and job.name:
            state = job.state.value if job.state is not None else "JOB_STATE_UNSPECIFIED"
            return job.name, state.removeprefix("JOB_STATE_")
        if seen >= _SEARCHED:
            break
    return None


def cancel_orphan(settings: Settings, job_id: str, batch_id: str) -> str | None:
    """Cancel the gone job's batch if it still runs; returns its server name when cancelled."""
    client = client_for(settings)
    found = find_on_server(client, job_id, batch_id)
    if found is None or found[1] in TERMINAL:
        return None
    name = found[0]
    client.batches.cancel(name=name)
    log.warning("job %s is gone: cancelled its batch %s (%s)", job_id, name, batch_id)
    return name
