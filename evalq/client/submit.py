"""Submitting a job: every check it passes before it is stored (the metric, its options, every
row, thinking settings against the models, the spend cap), then storing it and enqueueing its
rows. The dry run shares the checks (evalq.client.dry_run)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from evalq.client.jobs.lookup import check_name, new_job_id
from evalq.client.owner import current_user
from evalq.core.candidates import candidate_of
from evalq.core.column_map import check_column_map
from evalq.core.data_roots import every_row_refused
from evalq.core.dataset import LoadedDataset, load_dataset
from evalq.core.errors import DatasetError, EvalqError
from evalq.core.groups import check_group_columns, group_by_columns
from evalq.core.human.labels import label_columns
from evalq.core.media import MediaRules
from evalq.core.media.backend import check_rows as check_backend_media
from evalq.core.media.gcs import GcsNameError
from evalq.core.metric import get_metric
from evalq.core.models import JobConfig, RowResult
from evalq.core.options import validate_options
from evalq.core.pricing import Price, price_for
from evalq.core.thinking import Setting, ThinkingError
from evalq.core.thinking import check_job as check_thinking
from evalq.core.thinking import effective as thinking_effective
from evalq.core.verdicts import failed_row
from evalq.worker.dispatch.queues import PREPARE_ROW, queue_for
from evalq.worker.jobs.control import PRIORITIES, JobControl, Send, SendRow
from evalq.worker.judges.check import vertex_settings_problem
from evalq.worker.judges.files import media_rules
from evalq.worker.settings import Settings

if TYPE_CHECKING:
    from evalq.client.reads import JobReader


class JobSpec(TypedDict, total=False):
    """What a job is asked to be, beyond its metric and dataset (Client.submit and plan).

    `judge_models` (several judges) is for the metrics that use them; the first one is the
    job's main judge. `options` are the metric's (checked by its options model).
    `max_field_bytes`, `max_row_bytes` and `max_questions_per_row` default to their EVALQ_
    settings (the dataset's own bounds are the settings'). Local media are read only under
    `data_roots` (default: EVALQ_DATA_ROOTS, else the dataset's folder), Cloud Storage media
    only from the places in `gcs_media` (default: EVALQ_GCS_MEDIA; none when unset). `thinking`
    ({role: setting}) goes over EVALQ_THINKING and evalq's defaults; a setting a model would
    refuse is a DatasetError naming model and range. `max_cost_usd` pauses the job once its
    priced spend reaches it (every model it calls needs a known price). `priority` ("high",
    "normal", "low") and `max_in_flight` (rows at once) set the job's turns
    (evalq.worker.dispatch.turns)."""

    judge_model: str | None
    judge_models: list[str] | None
    options: dict[str, Any] | None
    use_cache: bool
    max_field_bytes: int | None
    max_row_bytes: int | None
    max_questions_per_row: int | None
    data_roots: list[str | Path] | None
    gcs_media: list[str] | None
    thinking: Mapping[str, Setting] | None
    max_cost_usd: float | None
    priority: str
    max_in_flight: int | None
    name: str | None
    group_by: list[str] | None
    column_map: dict[str, str] | None


@dataclass
class Submitted:
    job_id: str
    dataset: LoadedDataset


@dataclass
class Prepared:
    """A job that passed every check, not yet stored."""

    config: JobConfig
    dataset: LoadedDataset
    rules: MediaRules
    prices: dict[str, Price]


class Sender(Protocol):
    """What publishing a task needs of a Celery app (a test may stand in for it)."""

    def send_task(self, name: str, *args: Any, **kwargs: Any) -> Any: ...

    def producer_or_acquire(self) -> Any: ...


def models_by_role(
    judges: list[str], options: Mapping[str, Any], judge_model: str
) -> dict[str, list[str]]:
    """Every model that may play each role in a job."""
    candidates = [str(options.get("candidate_model") or judge_model)]
    if options.get("prompt_template"):  # rank: candidates without guidance name models
        guided = options.get("candidate_prompts") or {}
        candidates += [str(c) for c in options.get("candidates", []) if c not in guided]
    rubric = [str(options["rubric_model"])] if options.get("rubric_model") else judges
    return {"rubric": rubric, "validator": judges, "judge": judges, "candidate": candidates}


def job_thinking_settings(
    configured: Mapping[str, Setting],
    per_job: Mapping[str, Setting] | None,
    judges: list[str],
    options: Mapping[str, Any],
    judge_model: str,
) -> tuple[dict[str, Setting], list[str]]:
    """The job's thinking per role, checked against every model that may play each role."""
    try:
        chosen = thinking_effective(configured, per_job)
        return chosen, check_thinking(chosen, models_by_role(judges, options, judge_model))
    except ThinkingError as exc:
        raise DatasetError(str(exc)) from None


def check_cap(
    max_cost_usd: float | None, table: Mapping[str, Price], models: Mapping[str, list[str]]
) -> None:
    """A spend cap needs a price for every model the job may call: a call with no price adds
    nothing to the spend, so the cap could not hold."""
    if max_cost_usd is None:
        return
    if isinstance(max_cost_usd, bool) or not max_cost_usd > 0:
        raise DatasetError(f"--max-cost-usd must be a positive amount, got {max_cost_usd!r}")
    unpriced = sorted(
        {m for names in models.values() for m in names if price_for(m, table) is None}
    )
    if unpriced:
        raise DatasetError(
            f"--max-cost-usd {max_cost_usd:g}: no price is known for {', '.join(unpriced)}, so "
            "its spend could not be counted against the cap; give its price in EVALQ_PRICES "
            '(JSON: {"model": {"input": USD_PER_1M, "output": USD_PER_1M}})'
        )


def check_turns(priority: object, max_in_flight: object) -> None:
    """A job's place in the turns (evalq.worker.dispatch.turns), refused before anything is
    stored."""
    if priority not in PRIORITIES:
        raise EvalqError(f"priority must be one of {', '.join(PRIORITIES)}, not {priority!r}")
    if max_in_flight is not None and (
        isinstance(max_in_flight, bool) or not isinstance(max_in_flight, int) or max_in_flight < 1
    ):
        raise EvalqError(
            f"max_in_flight must be a whole number of rows >= 1, not {max_in_flight!r}"
        )


def check_mode(mode: str, on_expiry: str) -> None:
    if mode not in ("online", "batch"):
        raise EvalqError(f"mode must be 'online' or 'batch', not {mode!r}")
    if on_expiry not in ("resubmit", "online"):
        raise EvalqError(f"on_expiry must be 'resubmit' or 'online', not {on_expiry!r}")


def refuse_unknown(given: Mapping[str, Any], spec: type[Any], where: str) -> None:
    """Keywords gathered into a TypedDict are not checked by Python: a misspelt one would be
    ignored, so it is refused here as a signature would refuse it."""
    unknown = sorted(set(given) - set(spec.__annotations__))
    if unknown:
        raise TypeError(f"{where}() got unexpected keyword argument(s): {', '.join(unknown)}")


def prepare(
    settings: Settings,
    metric: str,
    dataset: str | Path,
    spec: JobSpec,
    reader: JobReader | None = None,
) -> Prepared:
    """Every check a job passes before it is stored, shared by submit and the dry run.
    `reader` reads the job named by the questions_from option (default: one on `settings`)."""
    refuse_unknown(spec, JobSpec, "submit")
    if (vertex := vertex_settings_problem(settings)) is not None:
        raise EvalqError(vertex)  # its rows would be judged nowhere (and gs:// read nowhere)
    check_turns(spec.get("priority", "normal"), spec.get("max_in_flight"))
    check_name(spec.get("name"))  # these two refused before the dataset is read
    get_metric(metric)  # an unknown metric fails before anything else
    options = validate_options(metric, spec.get("options"))
    per_job = ("max_field_bytes", "max_row_bytes", "max_questions_per_row")
    given: dict[str, Any] = {n: spec.get(n) for n in per_job if spec.get(n) is not None}
    bounds = replace(settings.input_bounds(), **given)
    data_roots = spec.get("data_roots")
    roots = [str(r) for r in data_roots or settings.data_roots or [Path(dataset).parent]]
    rules = job_media_rules(settings, roots, spec.get("gcs_media"))
    column_map = spec.get("column_map")
    group_by = group_by_columns(spec.get("group_by") or [])  # before the dataset is read
    loaded = load_dataset(
        dataset, metric, options, rules, bounds=bounds, column_map=column_map, read_columns=group_by
    )
    if (source := options.get("questions_from")) is not None:
        reader = reader or _reader(settings)
        source = questions_job(reader, str(source))
        options = {**options, "questions_from": source}  # the job's id, whatever named it
        loaded = questions_from(settings, metric, source, loaded, options, reader)
    return prepare_loaded(settings, metric, dataset, loaded, options, spec, rules)


def prepare_loaded(
    settings: Settings,
    metric: str,
    dataset: str | Path,
    loaded: LoadedDataset,
    options: dict[str, Any],
    spec: JobSpec,
    rules: MediaRules,
) -> Prepared:
    """The checks of a job whose rows are read already (from its dataset, or from another
    job's stored inputs by evalq.client.regrade), then its config."""
    name = check_name(spec.get("name"))
    group_by = group_by_columns(spec.get("group_by") or [])
    column_map = spec.get("column_map")
    check_group_columns(group_by, loaded.rows)
    # Media the workers' backend can't take (a gs:// URI on the Gemini API, a file over the
    # inline limit on Vertex AI): refused now, not failed row by row after storing. The
    # submitter reads GOOGLE_GENAI_USE_VERTEXAI as the workers do (as the metric's refusal below).
    check_backend_media(loaded.rows, settings.use_vertexai, settings.inline_max_bytes)
    judge_model = spec.get("judge_model")
    judges = list(spec.get("judge_models") or ([judge_model] if judge_model else []))
    judge_model = judges[0] if judges else settings.judge_model
    if why := get_metric(metric).refusal(options, judges or [judge_model], settings.use_vertexai):
        raise DatasetError(why)  # e.g. the API would refuse every validator call
    job_thinking, thinking_warnings = job_thinking_settings(
        settings.thinking, spec.get("thinking"), judges or [judge_model], options, judge_model
    )
    prices = settings.price_table()
    max_cost_usd = spec.get("max_cost_usd")
    check_cap(max_cost_usd, prices, models_by_role(judges or [judge_model], options, judge_model))
    warnings = loaded.warnings[:50] + (
        [f"... {len(loaded.warnings) - 50} more"] if len(loaded.warnings) > 50 else []
    )
    warnings += thinking_warnings
    config = JobConfig(
        job_id=new_job_id(),
        metric=metric,
        judge_model=judge_model,
        judge_models=judges or [judge_model],
        options=options,
        dataset=str(Path(dataset).resolve()),
        rows_total=loaded.total,
        created_at=time.time(),
        use_cache=spec.get("use_cache", True),
        warnings=warnings,
        data_roots=[str(root) for root in rules.roots.roots],
        thinking=job_thinking,
        prices={model: price.to_json() for model, price in prices.items()},
        max_cost_usd=max_cost_usd,
        priority=spec.get("priority", "normal"),
        max_in_flight=spec.get("max_in_flight"),
        name=name,
        group_by=group_by,
        column_map=check_column_map(column_map),
        ttl_s=settings.result_ttl_s,  # the submitter's: every key of the job keeps it
        owner=current_user(settings.redis_url),
        backend="Vertex AI" if settings.use_vertexai else "Gemini API",
    )
    return Prepared(config=config, dataset=loaded, rules=rules, prices=prices)


def never_stored(prepared: Prepared, dataset: str | Path) -> str | None:
    """Why a job should not be stored: every row failed at load on its local media (outside
    the data roots, or missing), so it could only end with no scored row; the reason names
    the fix (evalq.core.data_roots.every_row_refused). A job where some rows load runs."""
    loaded = prepared.dataset
    if loaded.rows or not loaded.errors:
        return None
    base_dir = Path(dataset).resolve().parent
    return every_row_refused(loaded.errors, base_dir, prepared.rules.roots)


def job_media_rules(
    settings: Settings, roots: list[str], gcs_media: list[str] | None
) -> MediaRules:
    """The media rules a submit checks its rows against; a malformed `gcs_media` argument is
    refused in one line naming it (the setting's own value was checked when it was read)."""
    if isinstance(gcs_media, str):
        raise EvalqError(f"gcs_media: give a list of places, not the string {gcs_media!r}")
    try:
        return media_rules(settings, roots, gcs_media)
    except GcsNameError as exc:
        raise EvalqError(
            f"gcs_media: {exc}; give gs://BUCKET or gs://BUCKET/FOLDER/ places"
        ) from None


def _reader(settings: Settings) -> JobReader:
    from evalq.client.reads import JobReader

    return JobReader(settings)


def questions_job(reader: JobReader, ref: str) -> str:
    """--questions-from JOB as a job id: JOB is an id, a unique id prefix or a --name
    (evalq.client.jobs.lookup); a name or prefix that fits no job, or several, is refused with
    the flag named."""
    from evalq.client.jobs.lookup import AmbiguousJob, resolve
    from evalq.core.errors import JobNotFound

    try:
        return resolve(reader, ref)
    except (JobNotFound, AmbiguousJob) as exc:
        raise type(exc)(f"--questions-from {ref}: {exc}") from None


def questions_from(
    settings: Settings,
    metric: str,
    job_id: str,
    loaded: LoadedDataset,
    options: Mapping[str, Any],
    reader: JobReader | None,
) -> LoadedDataset:
    """--questions-from JOB: every row given the questions that job asked for its prompt
    (evalq.client.question_sets), or refused before anything is stored."""
    from evalq.client.jobs.lookup import check_job_id
    from evalq.client.question_sets import borrow_questions

    try:
        check_job_id(job_id)
    except EvalqError as exc:
        raise DatasetError(f"--questions-from: {exc}") from None
    return borrow_questions(reader or _reader(settings), metric, job_id, loaded, options)


def store_and_enqueue(
    control: JobControl, app: Sender, config: JobConfig, loaded: LoadedDataset
) -> None:
    """Store the job with its rows (lines rejected at load fail now) and start it: its rows
    wait for turns (evalq.worker.dispatch.turns) and the free ones go out now, one task per row; in
    batch mode one batch submission (JobControl.create)."""
    rejected = rejected_rows(config, loaded)  # counted already
    control.create(config, loaded.rows, rejected, row_sender(app), step_sender(app))


def rejected_rows(config: JobConfig, loaded: LoadedDataset) -> list[RowResult]:
    """The lines refused at load, failed now, each with its --group-by columns and its human
    label as read, so it counts in its own group (not under "(no value)") in the summary."""
    kept = set(config.group_by) | label_columns(config.metric, config.options)
    rows = []
    for line, err in loaded.errors:
        columns = loaded.rejected_columns.get(line, {})
        extra = {key: value for key, value in columns.items() if key in kept}
        failed = failed_row(
            err.row_id, line, "", "input_error", str(err), candidate=candidate_of(err), extra=extra
        )
        rows.append(failed)
    return rows


def send(app: Sender, name: str, args: tuple[object, ...], countdown_s: float | None) -> None:
    """Enqueue one task by name (batch mode's steps; a row on the rows queue)."""
    app.send_task(name, args, countdown=countdown_s, queue=queue_for(name))


def step_sender(app: Sender) -> Send:
    """Sends batch mode's next step (evalq.worker.batch.names)."""

    def send_step(name: str, args: tuple[object, ...], countdown_s: float | None) -> None:
        send(app, name, args, countdown_s)

    return send_step


def row_sender(app: Sender) -> SendRow:
    """Sends one row's prepare_row task (a row given a turn)."""

    def send_row(job_id: str, row: str) -> None:
        app.send_task(PREPARE_ROW, (job_id, row), queue=queue_for(PREPARE_ROW))

    return send_row
