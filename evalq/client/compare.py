"""Comparisons on the client side: read the sides' results and compare them (`evalq compare`,
`evalq leaderboard`), and the Python API's `evalq.compare` with DataFrames."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from evalq.client.output.exports.frames import CompareResult, comparison_frames
from evalq.client.output.formats import NO_BILLED_CALL
from evalq.comparisons.align import AlignBy, Side
from evalq.comparisons.comparison import Comparison, compare_sides
from evalq.comparisons.leaderboard import Standing, leaderboard
from evalq.comparisons.setups import side_setup
from evalq.core.errors import EvalqError

if TYPE_CHECKING:
    from evalq.client.reads import JobReader


class CompareError(EvalqError):
    """A side could not be read, or the sides can not be compared."""


def split_spec(spec: str) -> tuple[str, str | None, str]:
    """`JOB`, `JOB:CANDIDATE`, either with a display name in front (`NAME=JOB`); returns the
    job id, the candidate and the label."""
    label, _, rest = spec.rpartition("=")
    job_id, _, candidate = rest.partition(":")
    return job_id, (candidate or None), (label or rest)


def resolve_spec(client: JobReader, spec: str) -> str:
    """The side `spec` names with its job as an id: `[LABEL=]JOB[:CANDIDATE]`, JOB an id, a
    unique id prefix or a --name (evalq.client.jobs.lookup). A full id costs no lookup. A --name
    may itself hold `=` or `:`: the spec whole, then its part after the label, is tried as a
    name before the spec is split there."""
    from evalq.client.jobs.lookup import is_job_id, lookup, pick, resolve

    job, candidate, label = split_spec(spec)
    if is_job_id(job):
        return spec
    given = "=" in spec
    rest = spec.rpartition("=")[2]
    whole: list[tuple[str, str | None]] = []  # (a name that may hold "=" or ":", its label)
    if given or candidate is not None:
        whole.append((spec, None))
    if given and ":" in rest:
        whole.append((rest, label))
    for name, named in whole:
        if found := lookup(client, name):
            return _spec(named, pick(client, name, found), None)
    return _spec(label if given else None, resolve(client, job), candidate)


def _spec(label: str | None, job_id: str, candidate: str | None) -> str:
    return (
        (f"{label}=" if label is not None else "") + job_id + (f":{candidate}" if candidate else "")
    )


def generating_model(rows: Sequence[Any]) -> str | None:
    """The one model that generated the side's responses (a groundedness job run with
    candidate_model and no response column), else None."""
    models = {
        str(r.details["candidate_model"])
        for r in rows
        if r.details.get("response_source") == "candidate" and r.details.get("candidate_model")
    }
    return models.pop() if len(models) == 1 else None


def side_label(job_id: str, candidate: str | None, name: str | None, rows: Sequence[Any]) -> str:
    """A side given without a label: the job's --name (with the candidate, for one candidate
    of a named job), else the candidate, else the model that generated its responses, else
    the job id."""
    if name:
        return f"{name}:{candidate}" if candidate else name
    return candidate or generating_model(rows) or job_id


def load_side(client: JobReader, spec: str) -> Side:
    from evalq.client.jobs.lookup import check_job_id

    job_id, candidate, label = split_spec(spec)
    check_job_id(job_id)
    summary = client.summary(job_id)
    rows = client.results(job_id)
    given = "=" in spec
    if candidate is not None:
        picked = [r for r in rows if row_candidate(r) == candidate]
        if not picked:
            known = sorted({c for r in rows if (c := row_candidate(r)) is not None})
            raise CompareError(
                f"job {job_id} has no rows for candidate {candidate!r}"
                + (f"; its candidates: {', '.join(known)}" if known else "")
            )
        rows = picked
    shared = tuple(c for c in client.candidates(job_id) if c != candidate) if candidate else ()
    return Side(
        label=label if given else side_label(job_id, candidate, summary.name, rows),
        rows=rows,
        job_id=job_id,
        candidate=candidate,
        metric=summary.metric,
        simulated=summary.simulated,
        cost_usd=summary.cost_usd,
        cost_shared_with=shared,
        cost_note=summary.cost_note or (None if summary.usage else NO_BILLED_CALL),
        setup=side_setup(summary.judge_setup, rows),
        question_set=summary.question_set,
    )


def row_candidate(row: Any) -> str | None:
    """The candidate a row's result belongs to, for multi-candidate jobs (None otherwise)."""
    value = getattr(row, "candidate", None)
    return value if isinstance(value, str) else None


def expand_specs(client: JobReader, specs: Sequence[str]) -> list[str]:
    """A multi-candidate job named whole stands for each of its candidates (`JOB:sdxl`,
    `JOB:flux`, ...), named by the candidate alone when it is the only job named."""
    from evalq.client.jobs.lookup import check_job_id

    out: list[str] = []
    for spec in specs:
        job_id, candidate, label = split_spec(spec)
        names = [] if candidate is not None else client.candidates(check_job_id(job_id))
        if not names:
            out.append(spec)
            continue
        for name in names:
            if len(specs) == 1 or "=" in spec:
                shown = name if len(specs) == 1 else f"{label}:{name}"
                out.append(f"{shown}={job_id}:{name}")
            else:  # labelled when loaded, by the job's --name if it has one
                out.append(f"{job_id}:{name}")
    return out


def load_sides(client: JobReader, specs: Sequence[str]) -> list[Side]:
    specs = expand_specs(client, [resolve_spec(client, spec) for spec in specs])
    if len(specs) < 2:
        raise CompareError(
            "name at least two jobs (or JOB:CANDIDATE), or one job with several candidates"
        )
    sides = unique_labels([load_side(client, spec) for spec in specs], specs)
    labels = [s.label for s in sides]
    if len(set(labels)) != len(labels):
        raise CompareError(f"a side is named twice: {', '.join(labels)}")
    return sides


def unique_labels(sides: list[Side], specs: Sequence[str]) -> list[Side]:
    """Two sides named alike by what they are (two jobs of one --name, the same candidate in
    two jobs) are told apart by their job ids; a name the user gave is kept as given."""
    labels = [s.label for s in sides]
    return [
        replace(side, label=f"{side.label} ({side.job_id})")
        if labels.count(side.label) > 1 and "=" not in spec
        else side
        for side, spec in zip(sides, specs, strict=True)
    ]


def compare_jobs(
    client: JobReader,
    specs: Sequence[str],
    *,
    by: AlignBy | None = None,
    seed: int | None = None,
    group_by: Sequence[str] = (),
) -> Comparison:
    sides = load_sides(client, specs)
    if seed is None:
        return compare_sides(sides, by=by, group_by=group_by)
    return compare_sides(sides, by=by, seed=seed, group_by=group_by)


def leaderboard_of(comparison: Comparison) -> list[Standing]:
    return leaderboard(comparison)


def compare(
    *sides: Any,
    by: AlignBy | None = None,
    seed: int | None = None,
    client: JobReader | None = None,
    group_by: str | Sequence[str] = (),
) -> CompareResult:
    """Compare two or more jobs, or the candidates of one multi-candidate job, on their
    shared rows. The result's ``setup_differences`` (and ``mixed``) say where the sides were
    not judged alike.

    Args:
        *sides: The jobs: ids, unique id prefixes or names, `JOB:CANDIDATE`, `LABEL=JOB`, or
            Job handles; one multi-candidate job compares its candidates.
        by: Pair rows across the sides by "id" or "prompt" (default: by id when the sides'
            ids agree, else by prompt).
        seed: The seed of the bootstrap intervals (default: a fixed one, so a comparison
            read twice gives the same intervals).
        client: The reader to use (default: one from the environment's settings).
        group_by: Also compare per value of these dataset columns (`per_group`).

    Returns:
        The CompareResult: its frames, and the comparison as `evalq compare --json` prints it.
    """
    from evalq.client.reads import JobReader

    specs = [s if isinstance(s, str) else str(s.job_id) for s in sides]
    columns = [group_by] if isinstance(group_by, str) else list(group_by)
    return comparison_frames(
        compare_jobs(client or JobReader(), specs, by=by, seed=seed, group_by=columns)
    )


__all__ = ["CompareError", "compare"]
