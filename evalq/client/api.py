"""The Python API for notebooks and scripts: hand over a pandas DataFrame (or a path), get a
handle to wait on, read results back as a DataFrame."""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict, overload

from evalq.client.client import Client
from evalq.client.output.exports.frames import results_frame
from evalq.client.submit import JobSpec
from evalq.core.dry_report import DryRunReport
from evalq.core.models import JobSummary

if TYPE_CHECKING:
    import pandas as pd

    from evalq.worker.settings import Settings


def _cell(value: Any) -> Any:
    """DataFrame cells as JSON: NaN/NaT are missing, numpy scalars become Python ones."""
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item") and not isinstance(value, (list, dict, str, bytes)):
        try:
            return value.item()
        except (ValueError, AttributeError):
            return value
    return value


def _write_frame(frame: pd.DataFrame, base_dir: Path) -> Path:
    """A DataFrame becomes a JSONL file in base_dir, so relative media paths resolve from there.
    Two columns of one name (as the loader reads names: without the spaces around them) are
    refused first: each record keeps one value per name, so one column would be lost unsaid."""
    from evalq.core.column_names import MAP_KEYWORD, refuse_repeated_columns

    names = [str(name) for name in frame.columns]
    refuse_repeated_columns(
        "DataFrame", names, "only the last would be read", mapped_by=MAP_KEYWORD
    )
    with tempfile.NamedTemporaryFile(
        "w", suffix=".jsonl", prefix=".evalq-", dir=base_dir, delete=False, encoding="utf-8"
    ) as handle:
        for record in frame.to_dict(orient="records"):
            clean = {str(k): _cell(v) for k, v in record.items()}
            handle.write(
                json.dumps({k: v for k, v in clean.items() if v is not None}, default=str) + "\n"
            )
    return Path(handle.name)


def progress_printer(job_id: str) -> Callable[[int, int], None]:
    """Job.wait's progress: a line per change of the count, never the same line twice."""
    last: list[tuple[int, int]] = []

    def on_progress(done: int, total: int) -> None:
        if last and last[0] == (done, total):
            return
        last[:] = [(done, total)]
        print(f"{job_id}: {done}/{total} rows", flush=True)

    return on_progress


class Job:
    """A submitted job. Everything lives in Redis and the archive: a new Job(ref) in another
    process works, `ref` being the job's id, a unique prefix of it (4 hex digits or more) or
    its --name (evalq.client.jobs.lookup; a name several jobs have is refused, listing them).

    Args:
        job_id: The job's id, a unique prefix of it (4 hex digits or more) or its name.
        client: The client to read and steer it with (default: one from the settings).
    """

    def __init__(self, job_id: str, client: Client | None = None) -> None:
        from evalq.client.jobs.lookup import resolve

        self.client = client or Client()
        self.job_id = resolve(self.client, job_id)

    def __repr__(self) -> str:
        return f"Job({self.job_id!r})"

    def wait(self, timeout_s: float | None = None, *, progress: bool = False) -> dict[str, Any]:
        """The summary once the job finishes, pauses or is cancelled. `progress=True` prints
        one line each time the count changes (whole lines: a notebook or a log shows every one).

        While the job runs with no worker alive in its Redis (evalq.client.workers_alive, said
        within a few seconds), `progress=True` prints a line saying so and how to start one,
        and another when a worker appears; without progress a NoWorkerWarning (warnings.warn)
        says it. Either way it keeps waiting.

        Args:
            timeout_s: Give up after this many seconds (default: wait as long as it takes).
            progress: Print a line each time the count of rows done changes.

        Returns:
            The job's summary, as `evalq status --json` prints it.
        """
        from evalq.client.workers_alive import worker_notes

        summary = self.client.wait(
            self.job_id,
            timeout_s=timeout_s,
            on_progress=progress_printer(self.job_id) if progress else None,
            on_workers=worker_notes(self.job_id, printed=progress),
        )
        return summary.model_dump()

    def summary(self, group_by: list[str] | None = None) -> dict[str, Any]:
        """The job's figures, also while it runs.

        Args:
            group_by: Dataset columns to give the figures per value of as well (`groups`).

        Returns:
            The job's summary, as `evalq status --json` prints it.
        """
        return self.summary_model(group_by).model_dump()

    def summary_model(self, group_by: list[str] | None = None) -> JobSummary:
        """The job's figures as a pydantic model rather than a dict.

        Args:
            group_by: Dataset columns to give the figures per value of as well (`groups`).
        """
        return self.client.summary(self.job_id, group_by=group_by)

    def results(self) -> pd.DataFrame:
        """One row per dataset row (and candidate): evalq's columns, the metric's, what the
        judge was shown under the dataset's column names, then the extra columns."""
        rows = self.client.results(self.job_id)
        return results_frame(rows, self.client.judged_texts(self.job_id, rows))

    def cancel(self, *, force: bool = False) -> dict[str, Any]:
        """Stop the job; rows already scored stay readable.

        Args:
            force: Act on another user's job (its `owner`), refused otherwise.

        Returns:
            The job's summary once cancelled.
        """
        return self.client.cancel(self.job_id, force=force).model_dump()

    def resume(self, *, max_cost_usd: float | None = None, force: bool = False) -> dict[str, Any]:
        """Continue the job, and say what that took (evalq.worker.jobs.control.ResumeOutcome: rows
        put back in line, and for a running job the rows left in flight or waiting and the
        lost ones re-sent), with `message` in words.

        Args:
            max_cost_usd: A new spend cap in US dollars, for a job a cap paused.
            force: Act on another user's job (its `owner`), refused otherwise.
        """
        from evalq.client.control import resume_outcome

        c = self.client
        outcome = resume_outcome(c.job_control, c.app, self.job_id, max_cost_usd, c.acting(force))
        return {**asdict(outcome), "message": outcome.describe()}

    def set_turns(
        self, *, priority: str | None = None, max_in_flight: int | None = None, force: bool = False
    ) -> dict[str, Any]:
        """Change the job's turn on shared workers while it runs.

        Args:
            priority: "high", "normal" or "low" (unchanged when None).
            max_in_flight: Rows of the job at once; 0 lifts the cap (unchanged when None).
            force: Act on another user's job (its `owner`), refused otherwise.
        """
        state = self.client.set_turns(
            self.job_id, priority=priority, max_in_flight=max_in_flight, force=force
        )
        return asdict(state)


class EvaluateSpec(TypedDict, total=False):
    """evaluate's keywords besides `dry_run` (see evaluate)."""

    judge_models: list[str] | None
    options: dict[str, Any] | None
    candidates: list[str] | None
    use_cache: bool
    base_dir: str | Path | None
    settings: Settings | None
    data_roots: list[str | Path] | None
    gcs_media: list[str] | None
    thinking: dict[str, int | str] | None
    max_cost_usd: float | None
    count_tokens: bool
    mode: Literal["online", "batch"]
    on_expiry: Literal["resubmit", "online"]
    vertex_batch_prefix: str | None
    priority: Literal["high", "normal", "low"]
    max_in_flight: int | None
    name: str | None
    column_map: dict[str, str] | None
    group_by: list[str] | None


def split_keywords(metric: str, given: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """evaluate's keywords as (its own, the metric's options). The options are the fields of
    the metric's options model, so every option the command line offers is a keyword here too
    and none is listed by hand; evaluate's own keywords come first. A keyword neither knows is
    refused, as a signature would refuse it, and so is an option given both as a keyword and
    in `options=` (which would win is no guess to make)."""
    from evalq.core.options import options_model

    fields = options_model(metric).model_fields
    own = {k: v for k, v in given.items() if k in EvaluateSpec.__annotations__}
    options = {k: v for k, v in given.items() if k not in own and k in fields}
    unknown = sorted(set(given) - set(own) - set(options))
    if unknown:
        offered = ", ".join(sorted(fields))
        raise TypeError(
            f"evaluate() got unexpected keyword argument(s): {', '.join(unknown)} "
            f"(the options of {metric!r} are: {offered})"
        )
    if own.get("candidates") is not None:
        options["candidates"] = list(own["candidates"])
    both = sorted(set(options) & set(own.get("options") or {}))
    if both:
        raise TypeError(
            f"evaluate(): option(s) {', '.join(both)} given both as a keyword and in options=; "
            "give each once"
        )
    return own, options


@overload
def evaluate(
    data: pd.DataFrame | str | Path,
    metric: str = ...,
    *,
    dry_run: Literal[False] = ...,
    **spec: Any,
) -> Job: ...


@overload
def evaluate(
    data: pd.DataFrame | str | Path,
    metric: str = ...,
    *,
    dry_run: Literal[True],
    **spec: Any,
) -> DryRunReport: ...


def evaluate(
    data: pd.DataFrame | str | Path,
    metric: str = "gecko-image",
    *,
    dry_run: bool = False,
    **keywords: Any,
) -> Job | DryRunReport:
    """Submit a dataset and return at once with a Job handle.

    Bad rows fail alone (see the results); a frame or file that is no dataset raises now. On
    shared workers jobs take turns (evalq.worker.dispatch.turns); `Job.set_turns` changes a
    job's turn later.

    Args:
        data: The rows: a DataFrame, or the path of a JSONL or CSV file.
        metric: The metric to judge them with.
        dry_run: Submit nothing and return the plan instead: calls, tokens, cost, time at the
            quota, the rows that would fail.
        **keywords: The job's settings (Other Parameters below), and the metric's options by
            name, e.g. `evaluate(df, "pointwise", template="fluency", samples=3)`.

    Other Parameters:
        judge_models (list[str] | None): The judge models (default: EVALQ_JUDGE_MODEL).
        options (dict[str, Any] | None): The metric's options as one dict, instead of
            keywords (not both for one option).
        candidates (list[str] | None): The columns holding each model's image, video or
            response (gecko-image, gecko-video, pointwise): each is scored on the same rubric,
            and `Job.results()` gains a `candidate` column.
        use_cache (bool): Read a reply cached from an earlier identical call (default: True).
        base_dir (str | Path | None): A DataFrame's folder: its relative media paths are read
            from there (default: the current folder).
        settings (Settings | None): The settings to use (default: from the environment).
        data_roots (list[str | Path] | None): The only folders local media are read under
            (default: EVALQ_DATA_ROOTS, else the dataset's folder).
        gcs_media (list[str] | None): The only `gs://` places media may come from (default:
            EVALQ_GCS_MEDIA; none when unset).
        thinking (dict[str, int | str] | None): Thinking per role, e.g.
            `{"validator": 0, "rubric": 2048, "judge": "min"}`.
        max_cost_usd (float | None): Pause the job once its spend reaches this many US dollars.
        count_tokens (bool): With `dry_run`, count the text with Gemini's count_tokens
            endpoint.
        mode (Literal["online", "batch"]): "batch" judges through Gemini's Batch API at half
            the price (a dry run shows both prices).
        on_expiry (Literal["resubmit", "online"]): Where a batch's unanswered requests go when
            it expires: a new batch, or online.
        vertex_batch_prefix (str | None): On Vertex AI, the `gs://` folder batch requests are
            written to.
        priority (Literal["high", "normal", "low"]): The job's turns on shared workers.
        max_in_flight (int | None): At most this many of the job's rows at once.
        name (str | None): What `evalq jobs` calls the job.
        column_map (dict[str, str] | None): The data's own columns read as the metric's
            fields, e.g. `{"query": "customer_message"}`.
        group_by (list[str] | None): Columns whose values the summary's figures are also
            given per (`Job.summary(group_by=...)` adds more for one read).

    Returns:
        The Job, or with `dry_run=True` the DryRunReport.

    Raises:
        TypeError: A keyword that is neither a setting nor one of the metric's options (named
            with the options the metric takes).
        DatasetError: The frame or file is no dataset, or a setting's value is refused.
    """
    spec, keyword_options = split_keywords(metric, keywords)
    client = Client(spec.get("settings"))
    options = spec.get("options")
    if keyword_options:
        options = {**(options or {}), **keyword_options}
    job: JobSpec = {
        "judge_models": spec.get("judge_models"),
        "options": options,
        "use_cache": spec.get("use_cache", True),
        "data_roots": spec.get("data_roots"),
        "gcs_media": spec.get("gcs_media"),
        "thinking": spec.get("thinking"),
        "max_cost_usd": spec.get("max_cost_usd"),
        "priority": spec.get("priority", "normal"),
        "max_in_flight": spec.get("max_in_flight"),
        "name": spec.get("name"),
        "column_map": spec.get("column_map"),
        "group_by": spec.get("group_by"),
    }
    mode, on_expiry = spec.get("mode", "online"), spec.get("on_expiry", "resubmit")

    def run(path: str | Path) -> Job | DryRunReport:
        if dry_run:
            count_tokens = spec.get("count_tokens", False)
            return client.plan(metric, path, count_tokens=count_tokens, **job)
        submitted = client.submit(
            metric,
            path,
            mode=mode,
            on_expiry=on_expiry,
            vertex_batch_prefix=spec.get("vertex_batch_prefix"),
            **job,
        )
        return Job(submitted.job_id, client)

    if isinstance(data, (str, Path)):
        return run(data)
    base_dir = spec.get("base_dir")
    folder = Path(base_dir) if base_dir is not None else Path.cwd()
    path = _write_frame(data, folder)
    try:
        return run(path)
    finally:
        path.unlink(missing_ok=True)


def regrade(
    job: str | Job,
    judge: str | list[str] | None = None,
    *,
    thinking: dict[str, int | str] | None = None,
    samples: int | str | None = None,
    rows: int | None = None,
    seed: int | None = None,
    mode: Literal["online", "batch"] = "online",
    name: str | None = None,
    use_cache: bool = False,
    settings: Settings | None = None,
    **more: Any,
) -> Job:
    """Judge an ended job's stored inputs again and return at once with the new Job.

    The same metric, options, rows, questions (Gecko: the job's frozen set, no rubric written)
    and responses, read from Redis or the archive; the dataset file is not needed.

    Args:
        job: The ended job: its id, a unique prefix of it, its name, or its Job.
        judge: The judge model, or several (default: the job's own).
        thinking: Thinking per role, as `evaluate` takes it (default: the job's own).
        samples: Judge calls per row, as the metric takes them (default: the job's own).
        rows: Judge only this many dataset rows: the first ones, or a sample with `seed`.
        seed: Draw the `rows` at random with this seed.
        mode: "online", or "batch" for Gemini's Batch API.
        name: What `evalq jobs` calls the new job.
        use_cache: Read a reply cached from the first job rather than asking the judge again.
        settings: The settings to use (default: from the environment).
        **more: max_cost_usd, priority, max_in_flight, on_expiry, vertex_batch_prefix, as
            `evaluate` takes them.

    Returns:
        The new Job, submitted and running.

    Raises:
        DatasetError: A row's media file is gone (naming its line): nothing is submitted.
    """
    from evalq.client.regrade import RegradeSpec
    from evalq.client.submit import refuse_unknown

    client = job.client if isinstance(job, Job) and settings is None else Client(settings)
    source = job.job_id if isinstance(job, Job) else job
    batch = {k: more.pop(k) for k in ("on_expiry", "vertex_batch_prefix") if k in more}
    refuse_unknown(more, RegradeSpec, "regrade")
    judges = [judge] if isinstance(judge, str) else list(judge) if judge else None
    wanted: RegradeSpec = {
        "judge_models": judges,
        "thinking": thinking,
        "samples": samples,
        "rows": rows,
        "seed": seed,
        "name": name,
        "use_cache": use_cache,
        **more,  # type: ignore[typeddict-item]
    }
    submitted = client.regrade(source, mode=mode, **batch, **wanted)
    return Job(submitted.job_id, client)
