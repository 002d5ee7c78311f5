"""Another job's questions (`evalq run ... --questions-from JOB`), so that a rerun after the rubric
cache expired, or another model's images, are scored on exactly the first job's questions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Protocol

from evalq.core.dataset import LoadedDataset
from evalq.core.errors import DatasetError, JobNotFound
from evalq.core.metric import QuestionSetMetric, get_metric
from evalq.core.models import JobSummary, Question, RowInput
from evalq.worker.jobs.reads import JobReads

ROWS_NAMED = 10  # rows named in a refusal; the count says how many there are


class QuestionSets(dict[str, list[Question]]):
    """prompt -> the questions a job asked for it, and that job's metric."""

    def __init__(self, metric: str, sets: Mapping[str, list[Question]] | None = None) -> None:
        super().__init__(sets or {})
        self.metric = metric


def stored_question_sets(reads: JobReads, job_id: str) -> QuestionSets:
    """prompt -> the questions of that prompt's stored plan (the first row's, in dataset order,
    when several rows share a prompt). JobNotFound when the job is not in Redis; a job whose
    metric asks no question sets has none (its metric says which it is)."""
    config = reads.config(job_id)  # raises JobNotFound
    metric = get_metric(config.metric)
    sets = QuestionSets(config.metric)
    if not isinstance(metric, QuestionSetMetric):
        return sets
    for key in reads.row_keys(job_id):
        try:
            row = reads.row(job_id, key)
        except JobNotFound:  # a line rejected at load: no row, no plan
            continue
        if row.prompt in sets:
            continue
        plan = reads.plan(job_id, key, metric.plan_model)
        if plan is not None:  # a row that failed before it was planned asked nothing
            sets[row.prompt] = metric.plan_questions(plan)
    return sets


class Reader(Protocol):
    """What borrowing questions reads of a job (evalq.client.reads.JobReader has both)."""

    def question_sets(self, job_id: str) -> dict[str, list[Question]]: ...

    def summary(self, job_id: str) -> JobSummary: ...


def _row_names(rows: list[RowInput]) -> str:
    named = list(dict.fromkeys(f"{r.id} (line {r.line})" for r in rows))
    more = len(named) - ROWS_NAMED
    return ", ".join(named[:ROWS_NAMED]) + (f" and {more} more" if more > 0 else "")


def borrow_questions(
    reader: Reader, metric: str, job_id: str, loaded: LoadedDataset, options: Mapping[str, Any]
) -> LoadedDataset:
    """The dataset with every row given the questions job `job_id` asked for its prompt, or a
    refusal in one line before anything is stored (DatasetError: a job of another metric, rows
    whose prompt it never asked about; JobNotFound for a job that exists nowhere)."""
    flag = f"--questions-from {job_id}"
    try:
        sets = reader.question_sets(job_id)
    except JobNotFound:
        raise JobNotFound(
            f"{flag}: no job {job_id} in Redis or the archive (never created, or expired)"
        ) from None
    source = sets.metric if isinstance(sets, QuestionSets) else reader.summary(job_id).metric
    if source != metric:
        raise DatasetError(
            f"{flag}: that job is {source} and this one is {metric}; "
            "a job can only borrow the questions of a job of its own metric"
        )
    if not isinstance(get_metric(metric), QuestionSetMetric):
        raise DatasetError(f"{flag}: {metric} asks no question sets, so it can borrow none")
    if options.get("questions") == "extend":
        raise DatasetError(
            f"{flag} gives every row that job's questions in place of a rubric; "
            "--questions extend does not go with it"
        )
    missing = [row for row in loaded.rows if row.prompt not in sets]
    if missing:
        count = len({row.line for row in missing})
        raise DatasetError(
            f"{flag}: {count} row(s) have a prompt that job never asked about: "
            f"{_row_names(missing)}"
        )
    replaced = len({row.line for row in loaded.rows if row.questions})
    rows = [row.model_copy(update={"questions": _given(sets[row.prompt])}) for row in loaded.rows]
    warnings = list(loaded.warnings)
    if replaced:
        warnings.append(
            f"{flag}: {replaced} row(s) had questions of their own; they are asked that job's"
        )
    return replace(loaded, rows=rows, warnings=warnings)


def _given(questions: list[Question]) -> list[Question]:
    """The questions as a row's own. A rater's answers stay behind: they were given about the
    other job's media, not this one's."""
    return [q.model_copy(update={"human": None, "human_error": None}) for q in questions]
