"""Judging an ended job's stored inputs again (`evalq regrade JOB`): the same metric, options,
questions and responses, read from Redis or the archive, so another judge is tried on exactly
what the first saw, with no dataset file."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from evalq.core.data_roots import locate
from evalq.core.dataset import LoadedDataset
from evalq.core.errors import DatasetError, EvalqError, InputError
from evalq.core.media import MediaRules
from evalq.core.metric import QuestionSetMetric, get_metric
from evalq.core.models import JobConfig, RowInput, RowResult
from evalq.core.options import validate_options
from evalq.core.thinking import Setting

if TYPE_CHECKING:
    from evalq.client.reads import JobReader
    from evalq.client.submit import JobSpec

ENDED = ("finished", "cancelled")
LINES_NAMED = 10  # rows named in a refusal; the count says how many there are
# Options that only point a job at its questions: a regrade's rows carry the frozen ones.
QUESTION_SOURCES = ("questions_from", "questions")


class RegradeSpec(TypedDict, total=False):
    """What changes in a regrade; everything else is the regraded job's.

    `judge_models` (default: the job's own judges), `thinking` ({role: setting}, over the
    job's), `samples` (the metric's --samples). `rows`: only N of the job's dataset rows (a
    multi-candidate row with all its cells): the first N, or with `seed` a sample of N drawn
    with that seed. `use_cache` is off by default: a regrade asks the judge again, so a
    reply cached from the first job can not stand in for the judge's answer today."""

    judge_models: list[str] | None
    thinking: Mapping[str, Setting] | None
    samples: int | str | None
    rows: int | None
    seed: int | None
    name: str | None
    use_cache: bool
    max_cost_usd: float | None
    priority: str
    max_in_flight: int | None


@dataclass
class Regrade:
    """A regrade ready for evalq.client.submit.prepare_loaded."""

    source: JobConfig
    loaded: LoadedDataset
    options: dict[str, Any]
    spec: JobSpec
    rules: MediaRules


def regrade_inputs(reader: JobReader, job_id: str, wanted: RegradeSpec) -> Regrade:
    """The job `job_id`'s stored rows as a dataset for a new job, with its questions and
    generated responses frozen; refused in one line (DatasetError) when the job has not
    ended or a row's media are gone."""
    from evalq.client.submit import job_media_rules, refuse_unknown

    refuse_unknown(wanted, RegradeSpec, "regrade")
    source = reader.config(job_id)
    status = reader.summary(job_id).status
    if status not in ENDED:
        raise EvalqError(
            f"job {job_id} is {status}: a job is regraded once it has ended "
            f"(`evalq wait {job_id}`, or `evalq cancel {job_id}` to end it now)"
        )
    metric = get_metric(source.metric)
    warnings: list[str] = []
    stored, results = reader.stored_inputs(job_id), reader.results(job_id)
    refused = {r.line for r in results} - {r.line for r in stored}
    if refused:
        warnings.append(
            f"{len(refused)} line(s) of job {job_id} were refused at submit (no row was "
            "stored for them): left out"
        )
    rows = frozen_responses(source, stored, results)
    options = dict(source.options)
    if isinstance(metric, QuestionSetMetric):
        rows, left_out = frozen_questions(rows, reader.question_sets(job_id))
        if left_out:
            warnings.append(
                f"{left_out} row(s) of job {job_id} asked no questions (they failed before "
                "their rubric was written): left out, as no question set was frozen for them"
            )
        options = {k: v for k, v in options.items() if k not in QUESTION_SOURCES}
    if not rows:
        raise DatasetError(f"job {job_id} has no stored row to judge again")
    rows = some_rows(rows, wanted.get("rows"), wanted.get("seed"))
    if (samples := wanted.get("samples")) is not None:
        options["samples"] = samples
    options = validate_options(source.metric, options)
    roots = source.data_roots or [str(Path(source.dataset).parent)]
    rules = job_media_rules(reader.settings, roots, None)
    refuse_gone_media(job_id, rows, rules)
    warnings += metric.check(rows, options)
    loaded = LoadedDataset(path=Path(source.dataset), rows=rows, warnings=warnings)
    spec: JobSpec = {
        "judge_models": list(wanted.get("judge_models") or source.judges),
        "thinking": {**source.thinking, **(wanted.get("thinking") or {})},
        "use_cache": wanted.get("use_cache", False),
        "max_cost_usd": wanted.get("max_cost_usd"),
        "priority": wanted.get("priority", "normal"),
        "max_in_flight": wanted.get("max_in_flight"),
        "name": wanted.get("name"),
        "group_by": list(source.group_by),
        "column_map": dict(source.column_map),
    }
    return Regrade(source=source, loaded=loaded, options=options, spec=spec, rules=rules)


def frozen_responses(
    source: JobConfig, rows: list[RowInput], results: list[RowResult]
) -> list[RowInput]:
    """Each row with the texts the model under test wrote for it (a groundedness response,
    a rank candidate's answer, as the metric's judged_inputs reads them from the result) as
    its own data, so a regrade judges them rather than asking for new ones."""
    metric = get_metric(source.metric)
    by_cell = {(r.line, r.candidate): r for r in results}
    out = []
    for row in rows:
        result = by_cell.get((row.line, row.candidate))
        if result is None:
            out.append(row)
            continue
        shown = metric.judged_inputs(row, result)
        written = {
            key: text
            for key, text in shown.items()
            if isinstance(text, str)
            and key != "prompt"
            and key not in row.data
            and key not in row.media
        }
        out.append(row.model_copy(update={"data": {**row.data, **written}}) if written else row)
    return out


def frozen_questions(
    rows: list[RowInput], sets: Mapping[str, list[Any]]
) -> tuple[list[RowInput], int]:
    """Each row given, as its own, the questions the job asked for its prompt (so no rubric is
    written), and how many dataset rows had none (left out)."""
    kept = [
        row.model_copy(update={"questions": sets[row.prompt]}) for row in rows if row.prompt in sets
    ]
    left_out = len({row.line for row in rows if row.prompt not in sets})
    return kept, left_out


def some_rows(rows: list[RowInput], count: int | None, seed: int | None) -> list[RowInput]:
    """The first `count` dataset rows (every cell of each), or a sample of `count` drawn with
    `seed`; all of them when `count` is None or not smaller."""
    if count is None:
        if seed is not None:
            raise DatasetError("--seed draws a sample of --rows N; give --rows too")
        return rows
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise DatasetError(f"--rows must be a whole number of rows >= 1, not {count!r}")
    lines = sorted({row.line for row in rows})
    chosen = set(
        lines[:count] if seed is None else random.Random(seed).sample(lines, min(count, len(lines)))
    )
    return [row for row in rows if row.line in chosen]


def refuse_gone_media(job_id: str, rows: list[RowInput], rules: MediaRules) -> None:
    """Local media must still be where the rows named them, under the job's roots: a row is
    never judged on something else, so a missing file refuses the regrade, naming its lines."""
    gone: list[str] = []
    for row in rows:
        for field, ref in row.media.items():
            if ref.kind != "path":
                continue
            try:
                locate(ref.value, Path(ref.value).parent, rules.roots, row.id, field)
            except InputError as exc:
                gone.append(f"line {row.line} (row {row.id}) {field}: {exc.message}")
    if gone:
        shown = "; ".join(dict.fromkeys(gone[:LINES_NAMED]))
        more = f"; and {len(gone) - LINES_NAMED} more" if len(gone) > LINES_NAMED else ""
        raise DatasetError(
            f"regrade {job_id}: the media of {len(gone)} row(s) are gone, so nothing was "
            f"submitted: {shown}{more}; put them back where the rows name them"
        )
