"""Jobs a test submits through the `evalq` command without waiting, so that several run at once
on the shared workers, and then waits on together."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from tests.support.cli import LONG_TIMEOUT_S, evalq_ok


def submitted_job(env: Mapping[str, str], *args: str) -> str:
    """The id of the job `evalq ARGS… --json` submits (`run` or `rank`, without --wait)."""
    return str(json.loads(evalq_ok(env, *args, "--json").stdout)["job_id"])


def wait_finished(redis_url: str, jobs: Iterable[tuple[str, str]]) -> None:
    """Waits on each (name, job id) in turn; every job must finish (a failure names it)."""
    from evalq.client import Client
    from evalq.worker.settings import Settings

    client = Client(Settings(redis_url=redis_url, api_key=None))
    for name, job_id in jobs:
        assert client.wait(job_id, timeout_s=LONG_TIMEOUT_S).status == "finished", name
