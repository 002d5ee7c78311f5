"""Drift reports on the client side: read two jobs (and a retest) from Redis or the archive, check
that they judged the same inputs, and hand them to evalq.comparisons.drift (`evalq drift`, and
the Python API's `evalq.drift`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalq.comparisons.drift.build import drift_report
from evalq.comparisons.drift.report import DriftReport
from evalq.comparisons.drift.units import JobSide, input_difference
from evalq.core.errors import EvalqError
from evalq.stats.paired import PAIRED_SEED

if TYPE_CHECKING:
    from evalq.client.client import Client
    from evalq.client.output.html.drift import PageSide
    from evalq.client.reads import JobReader

RETEST_SEED = 0  # which rows a --retest N draws: the same N rows on every run


class DriftError(EvalqError):
    """The two jobs can not be set against each other as one set of inputs judged twice."""


def job_side(reader: JobReader, job_id: str, human: str | None = None) -> JobSide:
    """A job as the report reads it; ``human``: a column of the dataset holding the people's
    labels, read instead of the job's own --human."""
    config = reader.config(job_id)
    summary = reader.summary(job_id)
    rows = reader.results(job_id)
    agreement: Any = summary.human_agreement
    if human is not None:
        from evalq.core.human.agreement import human_agreement

        options = {**config.options, "human": human}
        agreement = human_agreement(rows, config.model_copy(update={"options": options}))
    versions = sorted({v for r in rows for v in r.model_versions.values()})
    return JobSide(
        job_id=job_id,
        metric=summary.metric,
        judges=config.judges,
        rows=rows,
        simulated=summary.simulated,
        group_by=list(config.group_by),
        human=agreement,
        versions=versions,
    )


def _fields(row: Any) -> dict[str, object]:
    """What a row gave its judge: its prompt, media and fields (its other columns aside)."""
    return {
        "prompt": row.prompt,
        "media": {k: v.model_dump() for k, v in row.media.items()},
        **{f"data.{k}": v for k, v in row.data.items()},
    }


def check_same_inputs(reader: JobReader, old: JobSide, new: JobSide) -> None:
    """Refuse two jobs of different metrics, or whose rows of one id were given other inputs:
    a drift report is one set of outputs judged twice (`evalq compare` sets two apart)."""
    if old.metric != new.metric:
        raise DriftError(
            f"{old.job_id} is a {old.metric} job and {new.job_id} a {new.metric} job: drift "
            "compares one metric's verdicts on the same inputs"
        )
    candidates: list[str | None] = [*reader.candidates(old.job_id)] or [None]
    for candidate in candidates:
        a = reader.inputs(old.job_id, candidate)
        b = reader.inputs(new.job_id, candidate)
        shared = [k for k in a if k in b]
        if not shared:
            raise DriftError(
                f"{old.job_id} and {new.job_id} share no row id: drift compares the same inputs "
                "judged twice (use evalq compare for two sets of outputs)"
            )
        for key in shared:
            field = input_difference(_fields(a[key]), _fields(b[key]))
            if field is not None:
                where = f"row {key!r} (line {a[key].line})" + (
                    f", candidate {candidate}" if candidate else ""
                )
                raise DriftError(
                    f"{where} has another {field} in {new.job_id} than in {old.job_id}: drift "
                    "compares the same inputs judged twice (use evalq compare for two sets of "
                    "outputs)"
                )


def check_retest(old: JobSide, retest: JobSide) -> None:
    if list(retest.judges) != list(old.judges):
        raise DriftError(
            f"--retest-job {retest.job_id} was judged by {', '.join(retest.judges)}, not by the "
            f"old job's judge ({', '.join(old.judges)}): a retest is the old judge asked again"
        )


def retest_rows(client: Client, old: str, rows: int, seed: int = RETEST_SEED) -> str:
    """A retest: N of the old job's rows (a seeded sample) judged again by its own judges,
    waited for; returns its job id. It asks the judge again (no cached reply stands in)."""
    from evalq.client.jobs.lookup import resolve

    job_id = resolve(client, old)
    judges = client.config(job_id).judges
    submitted = client.regrade(job_id, judge_models=judges, rows=rows, seed=seed)
    summary = client.wait(submitted.job_id)
    if summary.status != "finished":
        raise DriftError(
            f"the retest job {submitted.job_id} (N={rows} rows of {job_id} judged again) is "
            f"{summary.status}, not finished: resume it and pass --retest-job {submitted.job_id}"
        )
    return submitted.job_id


def drift_jobs(
    reader: JobReader,
    old: str,
    new: str,
    *,
    retest_job: str | None = None,
    human: str | None = None,
    group_by: Sequence[str] = (),
    seed: int = PAIRED_SEED,
    top: int = 10,
) -> DriftReport:
    """The drift report of NEW against OLD (ids, unique prefixes or --names)."""
    from evalq.client.jobs.lookup import resolve

    old_side = job_side(reader, resolve(reader, old), human)
    new_side = job_side(reader, resolve(reader, new), human)
    check_same_inputs(reader, old_side, new_side)
    retest = None
    if retest_job is not None:
        retest = job_side(reader, resolve(reader, retest_job))
        check_same_inputs(reader, old_side, retest)
        check_retest(old_side, retest)
    return drift_report(old_side, new_side, retest=retest, seed=seed, group_by=group_by, top=top)


def drift(
    old: Any,
    new: Any,
    *,
    retest: int | None = None,
    retest_job: Any = None,
    human: str | None = None,
    group_by: str | Sequence[str] = (),
    seed: int = PAIRED_SEED,
    client: Client | None = None,
) -> DriftReport:
    """What changed between two jobs on the same inputs judged by two judges, each figure
    beside the old judge's own noise (its repeats, or a retest).

    Args:
        old: The job of the old judge: id, unique id prefix, name or Job handle.
        new: The job of the new judge, given as `old` is.
        retest: Make the retest now: N rows of `old` judged again by its judge, waited for.
        retest_job: A job already made of the old judge on the same rows again.
        human: A dataset column of people's labels, each judge measured against them.
        group_by: Also give the figures per value of these dataset columns.
        seed: The seed of the paired bootstrap.
        client: The client to use (default: one from the environment's settings).

    Returns:
        The DriftReport: ``.verdict.line`` says it in one line; ``.model_dump()`` is the JSON
        `evalq drift --json` prints.

    Raises:
        DriftError: Both `retest` and `retest_job` given, or jobs that can not be compared.
    """
    from evalq.client.client import Client

    def ref(job: Any) -> str:
        return job if isinstance(job, str) else str(job.job_id)

    columns = [group_by] if isinstance(group_by, str) else list(group_by)
    client = client or Client()
    if retest is not None and retest_job is not None:
        raise DriftError("give retest=N or retest_job=JOB, not both")
    if retest is not None:
        retest_job = retest_rows(client, ref(old), retest)
    return drift_jobs(
        client,
        ref(old),
        ref(new),
        retest_job=None if retest_job is None else ref(retest_job),
        human=human,
        group_by=columns,
        seed=seed,
    )


def page_sides(reader: JobReader, report: DriftReport) -> dict[str, PageSide]:
    """Both jobs' configs, results and stored inputs, for the HTML page's changed rows."""
    from evalq.client.output.html.drift import PageSide

    out = {}
    for key, job in (("old", report.old_job), ("new", report.new_job)):
        inputs: dict[Any, Any] = {}
        candidates: list[str | None] = [*reader.candidates(job)] or [None]
        for candidate in candidates:
            for row_id, row_input in reader.inputs(job, candidate).items():
                inputs[(row_id, candidate) if candidate else row_id] = row_input
        out[key] = PageSide(reader.config(job), reader.results(job), inputs)
    return out


__all__ = ["DriftError", "drift"]
