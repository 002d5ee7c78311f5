"""Writing ended jobs to the archive, from the workers: here and not in evalq.worker.archive
because it reads the store, and the archive sits below the settings."""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any

from evalq.core.metric import Metric, QuestionSetMetric, get_metric
from evalq.core.models import RowResult
from evalq.worker.archive.errors import ArchiveUnavailable
from evalq.worker.archive.mixed_archives import mixed_archives_warning, writers_fresh_s
from evalq.worker.archive.place import archive_place
from evalq.worker.archive.record import ArchivedRow, JobRecord
from evalq.worker.lifecycle.job_end import current_summary
from evalq.worker.settings import Settings
from evalq.worker.store import Store

log = logging.getLogger(__name__)
ENDED = ("finished", "cancelled")


def collect(store: Store, job_id: str, written_by: str = "") -> JobRecord:
    """Everything Redis holds of the job that its reading commands print, read in bulk."""
    config = store.config(job_id)
    status = store.status(job_id)
    summary = current_summary(store, job_id)
    lines = store.row_keys(job_id)
    inputs = store.raw_rows(job_id, lines)
    plans = store.raw_plans(job_id, lines)
    verdicts = store.raw_verdicts(job_id, lines)
    results = store.raw_results(job_id)
    metric = get_metric(config.metric)
    rows: list[ArchivedRow] = []
    sets: dict[str, str] = {}
    for line, input_json, plan_json, unit_verdicts in zip(
        lines, inputs, plans, verdicts, strict=True
    ):
        result_json = results.get(line)
        result = RowResult.model_validate_json(result_json) if result_json else None
        fingerprint = result.question_set if result is not None else None
        if fingerprint and fingerprint not in sets and plan_json is not None:
            questions = _plan_questions(metric, plan_json)
            if questions is not None:
                sets[fingerprint] = questions
        number, _, candidate = line.partition("/")
        identity = _identity(input_json, result)
        rows.append(
            ArchivedRow(
                key=line,
                line=int(number),
                row_id=identity[0],
                candidate=candidate or None,
                prompt=identity[1],
                input_json=input_json,
                result_json=result_json,
                question_set=fingerprint if fingerprint in sets else None,
                verdicts=sorted((int(unit), text) for unit, text in unit_verdicts.items()),
            )
        )
    batches_json, bound = _batches(store, job_id) if config.mode == "batch" else (None, None)
    return JobRecord(
        config=config,
        summary_json=summary.model_dump_json(),
        status=status,
        ended_at=store.ended_at(job_id, status),
        rows=rows,
        question_sets=sets,
        batches_json=batches_json,
        batch_bound=bound,
        written_by=written_by,
    )


def _identity(input_json: str | None, result: RowResult | None) -> tuple[str, str]:
    """The row's id and prompt, from its result, else its stored input."""
    if result is not None:
        return result.id, result.prompt
    if input_json:
        data = json.loads(input_json)
        return str(data.get("id", "")), str(data.get("prompt", ""))
    return "", ""


def _plan_questions(metric: Metric[Any, Any], plan_json: str) -> str | None:
    """The questions a stored plan asked, as a JSON list, when the metric has question sets
    (QuestionSetMetric); None for the others."""
    if not isinstance(metric, QuestionSetMetric):
        return None
    questions = metric.plan_questions(metric.plan_model.model_validate_json(plan_json))
    return json.dumps([q.model_dump(mode="json") for q in questions])


def _batches(store: Store, job_id: str) -> tuple[str | None, int | None]:
    from evalq.worker.batch import ledger

    records = ledger.records(store, job_id)
    return json.dumps([json.loads(r.model_dump_json()) for r in records]), store.max_batches(job_id)


@dataclass
class Archiver:
    """A worker's archive writer: `archive` None when the archive is off.

    A job that ends is due for the archive in the same atomic step as its status
    (transition.lua); the worker that ended it writes it at once (installed with
    lifecycle.job_end.on_job_end), and the watchdog's sweep writes what is due after a failure
    or a dead worker. A write replaces the job's record whole, so writing twice is harmless."""

    store: Store
    settings: Settings
    name: str

    def __post_init__(self) -> None:
        from evalq.worker.archive.archive import Archive

        place = archive_place(self.settings.archive_url)
        self.archive = None if place is None else Archive(place)
        self._warned: frozenset[str] = frozenset()

    @property
    def identity(self) -> str:
        return "off" if self.archive is None else self.archive.place.identity

    def write(self, job_id: str) -> bool:
        """Write the ended job now; False when it could not be (it stays pending, retried)."""
        due = self.store.archive_pending_since(job_id)
        status = self.store.status(job_id)
        if status == "unknown" or self.archive is None:
            self.store.archive_forget(job_id)  # gone from Redis, or no archive: nothing to do
            return status != "unknown"
        if status not in ENDED:
            self.store.archive_forget(job_id)  # resumed since: it is archived when it ends
            return False
        started = time.monotonic()
        try:
            record = collect(self.store, job_id, self.name)
            self.archive.write(record)
        except ArchiveUnavailable as exc:
            return self._failed(job_id, str(exc))
        except Exception as exc:  # a bug of ours or bad stored data: retried, never silent
            log.exception("archive: job %s could not be written", job_id)
            return self._failed(job_id, f"{type(exc).__name__}: {exc}")
        self.store.archive_written(job_id, due, time.time())
        log.info(
            "archive: job %s (%s, %d rows) written to %s in %.2f s",
            job_id,
            status,
            len(record.rows),
            self.archive.place.shown,
            time.monotonic() - started,
        )
        return True

    def _failed(self, job_id: str, error: str) -> bool:
        tries = self.store.archive_failed(job_id, error)
        self.store.archive_retry_at(job_id, time.time() + self.retry_after(tries))
        log.warning(
            "archive: job %s not written (try %d; kept in Redis until it is): %s",
            job_id,
            tries,
            error,
        )
        return False

    def retry_after(self, tries: int) -> float:
        base = self.settings.archive_retry_s
        return float(min(self.settings.archive_retry_max_s, base * 2 ** max(0, tries - 1)))

    def check(self) -> None:
        """Open the archive once at start (its schema created or upgraded), so a bad URL or
        a server out of reach shows in the worker's log at once, not when a job ends."""
        if self.archive is None:
            log.warning("archive: off (EVALQ_ARCHIVE_URL=off): ended jobs live in Redis only")
            return
        try:
            self.archive.open()
        except ArchiveUnavailable as exc:
            log.warning("archive: %s; ended jobs wait in Redis until it answers", exc)
            return
        log.info("archive: %s", self.archive.place.shown)
        self.register()

    def sweep(self, now: float | None = None) -> int:
        """Write every ended job whose write is due (the watchdog calls this); returns how
        many were written."""
        written = 0
        for job_id in self.store.archive_due(time.time() if now is None else now):
            written += self.write(job_id)
        return written

    def register(self, now: float | None = None) -> None:
        """Say which archive this worker writes to; warn in its log when live workers differ
        (`evalq status` warns too): each their own SQLite file, say."""
        now = time.time() if now is None else now
        self.store.register_archive_writer(self.name, self.identity, now)
        writers = self.store.archive_writers(
            since=now - writers_fresh_s(self.settings.watchdog_interval_s)
        )
        distinct = frozenset(writers.values())
        warning = mixed_archives_warning(writers)
        if warning is not None and distinct != self._warned:
            log.warning("archive: %s", warning)
        self._warned = distinct if warning is not None else frozenset()
