"""`evalq calibrate` and `evalq.calibrate`: which judge setup agrees best with your raters, each
setup a job on the same data; the figures are evalq.core.human.calibration's."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalq.client.output.exports.frames import CalibrateResult, calibration_frames
from evalq.core.errors import EvalqError
from evalq.core.human.calibration import (
    RESAMPLES,
    SEED,
    SetupRows,
    calibration,
)

if TYPE_CHECKING:
    import pandas as pd

    from evalq.client.reads import JobReader

DEFAULT_METRIC = "pointwise"


class CalibrateError(EvalqError):
    """A setup could not be run or read, or the setups cannot be compared."""


def check_setup_name(name: str) -> str:
    """A setup's name is the job's --name too, so it follows the same rule."""
    from evalq.client.jobs.lookup import check_name
    from evalq.core.errors import DatasetError

    try:
        checked = check_name(name)
    except DatasetError as exc:
        raise CalibrateError(f"setup {name!r}: {exc}") from None
    if not checked:
        raise CalibrateError("a setup needs a name (NAME:KEY=VALUE,...)")
    return checked


def submit_setups(
    data: pd.DataFrame | str | Path,
    metric: str,
    setups: Mapping[str, Mapping[str, Any]],
    **common: Any,
) -> dict[str, str]:
    """Submit every setup before waiting on any, so they run side by side and share the reply
    cache; setup name ->
    job id. Keywords are evaluate's: a bad one is refused naming the setup, before any job
    is submitted. Each setup is first planned as a dry run, which checks all that a submit
    checks (options, thinking against the models, the dataset) and stores nothing: a third
    setup refused after two were submitted would leave those two running, and paid for."""
    from evalq.client.api import _write_frame, evaluate, split_keywords

    if len(setups) < 2:
        raise CalibrateError(f"name at least two setups to rank, got {len(setups)}")
    for name, keywords in setups.items():
        check_setup_name(name)
        try:
            split_keywords(metric, {**keywords, **common})
        except TypeError as exc:
            raise CalibrateError(f"setup {name!r}: {exc}") from None
    if isinstance(data, (str, Path)):
        for name, keywords in setups.items():
            try:
                evaluate(data, metric, dry_run=True, **{"name": name, **common, **keywords})
            except EvalqError as exc:
                raise CalibrateError(f"setup {name!r}: {exc}") from None
        return {
            name: evaluate(data, metric, **{"name": name, **common, **keywords}).job_id
            for name, keywords in setups.items()
        }
    # A frame is written once, so every setup's job names the same dataset file.
    folder = common.get("base_dir")
    path = _write_frame(data, Path(folder) if folder is not None else Path.cwd())
    try:
        return submit_setups(path, metric, setups, **common)
    finally:
        path.unlink(missing_ok=True)


def read_setups(
    reader: JobReader,
    jobs: Mapping[str, str],
    *,
    timeout_s: float | None = None,
    wait: bool = True,
) -> list[SetupRows]:
    """Each job's summary and rows (waiting for it to end when ``wait``); the jobs must be
    on one dataset, one row per dataset row."""
    from evalq.client.jobs.lookup import resolve
    from evalq.client.watch import wait as wait_for

    if len(jobs) < 2:
        raise CalibrateError(f"name at least two jobs to rank, got {len(jobs)}")
    out = []
    for name, ref in jobs.items():
        job_id = resolve(reader, ref)  # an id, a unique id prefix or a --name
        if wait:
            wait_for(reader, job_id, timeout_s=timeout_s)
        summary = reader.summary(job_id)
        if reader.candidates(job_id):
            raise CalibrateError(
                f"setup {name!r}: job {job_id} has several candidates; calibrate reads one "
                "score per row (run one job per setup)"
            )
        out.append(SetupRows(name, summary, reader.results(job_id)))
    datasets = {s.summary.dataset for s in out}
    if len(datasets) > 1:
        shown = ", ".join(f"{s.name}: {s.summary.dataset or '(unknown)'}" for s in out)
        raise CalibrateError(f"the setups' jobs are on different datasets ({shown})")
    return out


def check_labelled(setups: list[SetupRows], human: str) -> None:
    """A column no row has is a typo or the wrong dataset, not a sample left unlabelled."""
    if any(human in row.extra for s in setups for row in s.rows):
        return
    seen = sorted({k for s in setups for row in s.rows for k in row.extra})
    raise CalibrateError(
        f"no row has a {human!r} column (the human labels); the rows' other columns: "
        + (", ".join(seen) or "none")
    )


def calibrate(
    data: pd.DataFrame | str | Path | None = None,
    *,
    human: str,
    setups: Mapping[str, Mapping[str, Any]] | None = None,
    jobs: Mapping[str, str] | None = None,
    metric: str = DEFAULT_METRIC,
    group_by: str | None = None,
    seed: int = SEED,
    resamples: int = RESAMPLES,
    timeout_s: float | None = None,
    reader: JobReader | None = None,
    **common: Any,
) -> CalibrateResult:
    """Rank judge setups by agreement with people's labels.

    Args:
        data: The dataset the setups run on: a DataFrame or a JSONL or CSV path.
        human: The dataset column of people's labels.
        setups: Setups to run on `data`: name -> `evaluate`'s keywords.
        jobs: Jobs already run on one dataset: name -> a job's id, unique prefix or name.
        metric: The metric the setups run with.
        group_by: The column whose rows are paired for pairwise accuracy (default: rows
            sharing a prompt).
        seed: The seed of the bootstrap intervals.
        resamples: Bootstrap resamples.
        timeout_s: Give up waiting for the jobs after this many seconds.
        reader: The reader to use (default: one from the settings).
        **common: Keywords every setup's job gets (e.g. ``settings``).

    Returns:
        The CalibrateResult: the setups ranked, with their agreement and intervals.

    Raises:
        CalibrateError: Both or neither of `setups` and `jobs`, `setups` without `data`,
            fewer than two setups, or no row with a `human` label.
    """
    from evalq.client.reads import JobReader

    if (setups is None) == (jobs is None):
        raise CalibrateError("give either setups (to run on data) or jobs (to read), not both")
    if setups is not None:
        if data is None:
            raise CalibrateError("setups run on data: give the dataset (a path or a DataFrame)")
        jobs = submit_setups(data, metric, setups, **common)
    assert jobs is not None
    reader = reader or JobReader(common.get("settings"))
    read = read_setups(reader, jobs, timeout_s=timeout_s)
    check_labelled(read, human)
    result = calibration(read, human, group_by=group_by, seed=seed, resamples=resamples)
    return calibration_frames(
        result, {s.name: s.summary.job_id for s in read}
    )  # names found as ids


__all__ = ["CalibrateError", "calibrate"]
