"""Whether a job's judge alias answered as a model version the previous job of its dataset and
metric never saw: scores can move with the judge alone, so `evalq status` says so and points to
`evalq drift`."""

from __future__ import annotations

from evalq.client.reads import JobReader
from evalq.core.models import JobSummary
from evalq.core.versions import setup_versions
from evalq.worker.archive.filters import JobFilter


def earlier_jobs(reader: JobReader, summary: JobSummary) -> list[JobSummary]:
    """The jobs of the same dataset file and metric created before this one, newest first."""
    which = JobFilter(metric=summary.metric, dataset=summary.dataset, limit=None)
    earlier = [
        other
        for other in reader.jobs(which, on_missing=lambda _why: None)
        if other.dataset == summary.dataset
        and other.job_id != summary.job_id
        and (other.created_at or 0.0) < (summary.created_at or 0.0)
    ]
    return sorted(earlier, key=lambda s: (s.created_at or 0.0, s.job_id), reverse=True)


def version_change_note(reader: JobReader, summary: JobSummary) -> str | None:
    """The line `evalq status` prints when a judge model answered this job as a version the
    previous job of its dataset and metric judged by that model never saw; None otherwise
    (no such job, no version known)."""
    mine = setup_versions(summary.judge_setup)
    if not summary.dataset or not any(mine.values()):
        return None
    earlier = [(job, setup_versions(job.judge_setup)) for job in earlier_jobs(reader, summary)]
    for model, versions in sorted(mine.items()):
        before = next(((job, seen[model]) for job, seen in earlier if seen.get(model)), None)
        if before is None or not versions - before[1]:
            continue
        job, seen = before
        return (
            f"judge version changed since {job.job_id}: {model} answered as "
            f"{', '.join(sorted(versions - seen))} (that job saw {', '.join(sorted(seen))}); "
            f"see `evalq drift {job.job_id} {summary.job_id}`"
        )
    return None
