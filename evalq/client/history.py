"""`evalq.history`: many jobs' rows as one DataFrame, each row one row's result with its job in
front, for people who analyse their history with pandas."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalq.client.jobs.listing import parse_since
from evalq.worker.archive.filters import JobFilter

if TYPE_CHECKING:
    import pandas as pd

    from evalq.client.reads import JobReader
    from evalq.worker.settings import Settings

JOB_COLUMNS = ("job_id", "job_name", "job_created_at", "metric", "dataset", "job_status")


def history(
    *,
    metric: str | None = None,
    name: str | None = None,
    dataset: str | None = None,
    since: str | float | None = None,
    limit: int | None = 100,
    judge_version: str | None = None,
    settings: Settings | None = None,
    reader: JobReader | None = None,
) -> pd.DataFrame:
    """The rows of every job the filters select (as `evalq jobs` takes them), the newest job
    first, from Redis and the archive.

    Args:
        metric: Only jobs of this metric.
        name: Only jobs whose name holds this text.
        dataset: Only jobs whose dataset path holds this text.
        since: Only jobs created since: a date, an age such as "7d", or epoch seconds.
        limit: At most this many jobs (None: every one).
        judge_version: Only jobs with a verdict a judge answered as this model version.
        settings: The settings to use (default: from the environment).
        reader: The reader to use (default: one from the settings).

    Returns:
        One row per job row: JOB_COLUMNS, then the columns `Job.results()` has.
    """
    import pandas as pd

    from evalq.client.output.exports.frames import results_frame
    from evalq.client.reads import JobReader

    reader = reader or JobReader(settings)
    start = parse_since(since) if isinstance(since, str) else since
    which = JobFilter(
        metric=metric,
        name=name,
        dataset=dataset,
        since=start,
        limit=limit,
        judge_version=judge_version,
    )
    frames = []
    for summary in reader.jobs(which):
        rows = reader.results(summary.job_id)
        frame = results_frame(rows, reader.judged_texts(summary.job_id, rows))
        front = {
            "job_id": summary.job_id,
            "job_name": summary.name,
            "job_created_at": summary.created_at,
            "metric": summary.metric,
            "dataset": summary.dataset,
            "job_status": summary.status,
        }
        for position, (column, value) in enumerate(front.items()):
            frame.insert(position, column, [value] * len(frame), allow_duplicates=True)
        frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=list(JOB_COLUMNS))
    return pd.concat(frames, ignore_index=True, sort=False)
