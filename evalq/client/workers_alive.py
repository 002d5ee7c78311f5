"""Whether any worker is alive to run a job, as the waiting commands and `evalq status` say it: a
running job in a Redis with no live worker registration makes no progress however long one
waits. A worker's registration lapses three heartbeats after its last one."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable

from evalq.core.secret_urls import mask_url
from evalq.worker.jobs.reads import JobReads
from evalq.worker.settings import Settings

NO_WORKER_GRACE_S = 2.0
CHECK_EVERY_S = 1.0  # Redis is asked at most this often while waiting
SAID_WITHIN_S = 5  # grace, a check, a poll: what docs/concepts/jobs-rows-units.md promises
DEFAULT_REDIS_URL = str(Settings.model_fields["redis_url"].default)


def shown_redis_url(url: str) -> str:
    """The URL as it may be printed: a password in it becomes <password>."""
    return mask_url(url, mask="<password>")


def start_command(settings: Settings) -> str:
    """The command that starts a worker on the Redis these settings name."""
    if settings.redis_url == DEFAULT_REDIS_URL:
        return "evalq worker"
    return f"EVALQ_REDIS_URL={shown_redis_url(settings.redis_url)} evalq worker"


def no_worker_message(reads: JobReads, settings: Settings) -> str:
    return (
        f"no worker is alive on Redis {reads.address()}: nothing runs the job until one "
        f"starts there; start one with `{start_command(settings)}`"
    )


def worker_back_message(reads: JobReads, count: int) -> str:
    workers = "a worker is" if count == 1 else f"{count} workers are"
    return f"{workers} alive on Redis {reads.address()} now: the job goes on"


def status_note(reads: JobReads, settings: Settings, job_id: str, status: str) -> str | None:
    """`evalq status`: a line for a running job when no worker is alive to run it."""
    if status != "running" or reads.live_workers() > 0:
        return None
    return f"job {job_id}: {no_worker_message(reads, settings)}"


class WorkerWatch:
    """Told on every poll of a wait; returns what to say when that changes: that no worker is
    alive (once none has been for `grace_s`, the time a worker started beside the command gets
    to register), then that one is (once it is back). It says each once and keeps waiting."""

    def __init__(
        self,
        reads: JobReads,
        settings: Settings,
        *,
        grace_s: float = NO_WORKER_GRACE_S,
        every_s: float = CHECK_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.reads, self.settings = reads, settings
        self.grace_s, self.every_s, self._clock = grace_s, every_s, clock
        self._started = clock()
        self._checked: float | None = None
        self.said_none = False

    def check(self) -> tuple[int, str] | None:
        """(workers alive, what to say) when that changed from nobody to somebody or back."""
        now = self._clock()
        if now - self._started < self.grace_s:
            return None  # a worker started beside the command gets that long to register
        if self._checked is not None and now - self._checked < self.every_s:
            return None
        self._checked = now
        count = self.reads.live_workers()
        if count == 0 and not self.said_none:
            self.said_none = True
            return 0, no_worker_message(self.reads, self.settings)
        if count > 0 and self.said_none:
            self.said_none = False
            return count, worker_back_message(self.reads, count)
        return None

    def ended(self) -> tuple[int, str] | None:
        """The job ended: if it was said no worker was alive, a worker came and ran it, even
        when it finished before a check could see it, so say that once."""
        if not self.said_none:
            return None
        self.said_none = False
        count = max(1, self.reads.live_workers())  # one ran it, whether or not still there
        return count, worker_back_message(self.reads, count)


class NoWorkerWarning(UserWarning):
    """Job.wait without progress: the job runs in a Redis with no worker alive."""


def worker_notes(job_id: str, *, printed: bool) -> Callable[[int, str], None]:
    """The Python API's Job.wait: each change printed as a line (progress=True), or no worker
    alive as a NoWorkerWarning (a worker back is then not said: the progress goes on)."""

    def note(alive: int, message: str) -> None:
        if printed:
            print(f"{job_id}: {message}", flush=True)
        elif alive == 0:
            warnings.warn(f"job {job_id}: {message}", NoWorkerWarning, stacklevel=2)

    return note
