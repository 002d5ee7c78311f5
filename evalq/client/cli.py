"""The `evalq` command line. Explicit flags win over EVALQ_* environment variables."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from evalq.core.registry import REGISTRY

if TYPE_CHECKING:
    from evalq.comparisons.align import AlignBy

err_console = Console(stderr=True)
out_console = Console()


def _apply_overrides(redis_url: str | None) -> None:
    """Flags become environment before any worker module builds its settings or the Celery app."""
    if redis_url:
        os.environ["EVALQ_REDIS_URL"] = redis_url
        from worker.settings import get_settings

        get_settings.cache_clear()


def _client(redis_url: str | None) -> Any:
    _apply_overrides(redis_url)
    from evalq.client.client import Client

    return Client()


redis_option = click.option(
    "--redis-url", envvar=None, default=None, help="Redis URL (default: EVALQ_REDIS_URL)."
)


def _job_id(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    """A job id is checked before anything reaches Redis (it becomes part of key names)."""
    from evalq.client.client import check_job_id
    from evalq.core.errors import JobNotFound

    try:
        return check_job_id(value)
    except JobNotFound as exc:
        raise click.BadParameter(str(exc)) from None


job_id_argument = click.argument("job_id", callback=_job_id)


@click.group()
@click.version_option(package_name="evalq")
def main() -> None:
    """Model-as-judge evaluations on Celery + Redis."""


def job_options(
    validator: str | None,
    candidate_model: str | None,
    prompt_template: Path | None,
    template: str | None,
    samples: int | None,
    rubric_model: str | None = None,
    questions: str | None = None,
) -> dict[str, Any]:
    """Metric options from flags; files are read here, so workers on other hosts need no copy."""
    options: dict[str, Any] = {}
    if validator:
        options["validator"] = validator
    if rubric_model:
        options["rubric_model"] = rubric_model
    if questions:
        options["questions"] = questions
    if candidate_model:
        options["candidate_model"] = candidate_model
    if prompt_template is not None:
        options["prompt_template"] = _read_text(prompt_template, "--prompt-template")
    if template:
        path = Path(template)
        if path.is_file():
            options["template_text"] = _read_text(path, "--template")
            options["template"] = path.name
        else:
            options["template"] = template
    if samples is not None:
        if samples < 1:
            raise click.BadParameter("must be at least 1", param_hint="--samples")
        options["samples"] = samples
    return options


def thinking_flags(budgets: tuple[str, ...], levels: tuple[str, ...]) -> dict[str, int | str]:
    """--thinking-budget ROLE=N and --thinking-level ROLE=LEVEL, one setting per role."""
    from evalq.core.thinking import ThinkingError, parse_assignments

    out: dict[str, int | str] = {}
    for flag, items, kind in (
        ("--thinking-budget", budgets, "budget"),
        ("--thinking-level", levels, "level"),
    ):
        try:
            out.update(parse_assignments(items, kind="budget" if kind == "budget" else "level"))
        except ThinkingError as exc:
            raise click.BadParameter(str(exc), param_hint=flag) from None
    return out


def _read_text(path: Path, flag: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise click.BadParameter(f"cannot read {path}: {exc}", param_hint=flag) from None


def metric_options(func: Any) -> Any:
    """Flags shared by `run` and `rank`; each metric reads the ones it uses."""
    for option in reversed(
        [
            click.option(
                "--wait", is_flag=True, help="Show progress and print the summary when done."
            ),
            click.option(
                "--json", "as_json", is_flag=True, help="Print the summary as one JSON object."
            ),
            click.option(
                "--judge-model",
                "judge_models",
                multiple=True,
                help="Judge model (default: EVALQ_JUDGE_MODEL); repeat for several judges.",
            ),
            click.option(
                "--no-cache",
                is_flag=True,
                help="Ask the judge again instead of reusing cached rubrics and replies.",
            ),
            click.option(
                "--validator",
                type=click.Choice(["per-question", "batched"]),
                default=None,
                help="Gecko: one validator call per question (default) or one per row.",
            ),
            click.option(
                "--rubric-model",
                default=None,
                help="Gecko: the model that writes the rubrics (default: the first judge).",
            ),
            click.option(
                "--questions",
                type=click.Choice(["replace", "extend"]),
                default=None,
                help="Gecko: a row's own questions replace the generated rubric (default) "
                "or are added to it.",
            ),
            click.option(
                "--candidate-model",
                default=None,
                help="Groundedness/ranking: the model under test that writes responses.",
            ),
            click.option(
                "--prompt-template",
                type=click.Path(dir_okay=False, path_type=Path),
                default=None,
                help="Groundedness/ranking: the candidate prompt template ({query}, {context}).",
            ),
            click.option(
                "--template",
                default=None,
                help="Pointwise: a built-in rubric name or a template file.",
            ),
            click.option(
                "--samples",
                type=int,
                default=None,
                help="Pointwise/pairwise: judge each row K times.",
            ),
            click.option(
                "--data-root",
                "data_roots",
                multiple=True,
                type=click.Path(file_okay=False, path_type=Path),
                help="Read local media only under this folder; repeat for several "
                "(default: EVALQ_DATA_ROOTS, else the dataset's folder).",
            ),
            click.option(
                "--thinking-budget",
                "thinking_budgets",
                multiple=True,
                metavar="ROLE=N",
                help="Thinking tokens per role (rubric, validator, judge, candidate): N, -1 "
                "(dynamic), 0 (off), min, modest or default. Repeatable.",
            ),
            click.option(
                "--dry-run",
                is_flag=True,
                help="Check every row and plan the calls, tokens, cost and time without "
                "enqueuing anything or calling a model; prints one table (or JSON with --json).",
            ),
            click.option(
                "--count-tokens",
                is_flag=True,
                help="With --dry-run: count text tokens with Gemini's count_tokens endpoint "
                "(free, one request per distinct text) instead of estimating them.",
            ),
            click.option(
                "--max-cost-usd",
                type=float,
                default=None,
                help="Pause the job once its spend reaches this many US dollars (priced from "
                "the price table); `evalq resume JOB --max-cost-usd Y` continues.",
            ),
            click.option(
                "--mode",
                type=click.Choice(["online", "batch"]),
                default="online",
                show_default=True,
                help="batch: send the judge calls through Gemini's Batch API at half the "
                "price; turnaround up to 24 hours (not on Vertex AI).",
            ),
            click.option(
                "--on-expiry",
                type=click.Choice(["resubmit", "online"]),
                default="resubmit",
                show_default=True,
                help="--mode batch: a batch that ends EXPIRED/FAILED has its unanswered "
                "requests sent again in a new batch, or online.",
            ),
            click.option(
                "--thinking-level",
                "thinking_levels",
                multiple=True,
                metavar="ROLE=LEVEL",
                help="Gemini 3 models: minimal, low, medium or high per role. Repeatable.",
            ),
            redis_option,
        ]
    ):
        func = option(func)
    return func


@main.command()
@click.argument("metric", type=click.Choice(sorted(REGISTRY)))
@click.argument("dataset", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--candidates",
    default=None,
    help="Several models in one job (gecko-image, gecko-video, pointwise): comma-separated "
    "columns, each holding one model's image, video or response for the row; every row is "
    "scored once per candidate on the same rubric. Compare them with `evalq compare JOB`.",
)
@metric_options
def run(metric: str, dataset: Path, candidates: str | None, **flags: Any) -> None:
    """Evaluate DATASET (JSONL or CSV) with METRIC."""
    options: dict[str, Any] = {}
    if candidates is not None:
        if metric == "rank":
            raise click.BadParameter("use `evalq rank --candidates`", param_hint="--candidates")
        options["candidates"] = [c.strip() for c in candidates.split(",") if c.strip()]
    _submit_and_report(metric, dataset, options, **flags)


@main.command()
@click.argument("dataset", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--candidates",
    required=True,
    help="Comma-separated candidate columns (or prompt variants) to rank; as in `evalq run "
    "--candidates`, each name is a column of the dataset (or, with --candidate-prompts, a "
    "response to generate).",
)
@click.option(
    "--candidate-prompts",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help='JSON {"name": "guidance"}: candidates that are not columns are generated by --candidate-model with that guidance.',
)
@metric_options
def rank(dataset: Path, candidates: str, candidate_prompts: Path | None, **flags: Any) -> None:
    """Rank candidates by pairwise comparison on every row (Bradley-Terry with intervals)."""
    names = [c.strip() for c in candidates.split(",") if c.strip()]
    if len(names) < 2:
        raise click.BadParameter("name at least two candidates", param_hint="--candidates")
    options: dict[str, Any] = {"candidates": names}
    if candidate_prompts is not None:
        try:
            guidance = json.loads(_read_text(candidate_prompts, "--candidate-prompts"))
        except json.JSONDecodeError as exc:
            raise click.BadParameter(f"not JSON: {exc}", param_hint="--candidate-prompts") from None
        options["candidate_prompts"] = guidance
    _submit_and_report("rank", dataset, options, **flags)


def _submit_and_report(
    metric: str,
    dataset: Path,
    extra_options: dict[str, Any],
    *,
    wait: bool,
    as_json: bool,
    judge_models: tuple[str, ...],
    no_cache: bool,
    redis_url: str | None,
    data_roots: tuple[Path, ...],
    thinking_budgets: tuple[str, ...] = (),
    thinking_levels: tuple[str, ...] = (),
    max_cost_usd: float | None = None,
    dry_run: bool = False,
    count_tokens: bool = False,
    mode: str = "online",
    on_expiry: str = "resubmit",
    **option_flags: Any,
) -> None:
    thinking = thinking_flags(thinking_budgets, thinking_levels)
    client = _client(redis_url)
    options = {**job_options(**option_flags), **extra_options}
    if count_tokens and not dry_run:
        raise click.BadParameter("only with --dry-run", param_hint="--count-tokens")
    common: dict[str, Any] = {
        "judge_models": list(judge_models),
        "options": options,
        "use_cache": not no_cache,
        "data_roots": list(data_roots) or None,
        "thinking": thinking,
        "max_cost_usd": max_cost_usd,
    }
    if dry_run:
        plan = client.plan(metric, dataset, count_tokens=count_tokens, **common)
        if as_json:
            click.echo(plan.model_dump_json())
        else:
            from evalq.client.render import print_dry_run

            print_dry_run(out_console, plan)
        return
    submitted = client.submit(metric, dataset, mode=mode, on_expiry=on_expiry, **common)
    job_id, loaded = submitted.job_id, submitted.dataset
    judges = ", ".join(judge_models) or client.settings.judge_model
    named = options.get("candidates") if metric != "rank" else None
    rows = (
        f"{loaded.total} rows" if not named else f"{loaded.total} cells ({len(named)} candidates)"
    )
    err_console.print(
        f"job [bold]{job_id}[/]: {metric}, {rows} ({len(loaded.errors)} rejected at load), judge {judges}"
    )
    for line, error in loaded.errors[:20]:
        err_console.print(f"[red]input error[/] line {line}: {error}")
    if len(loaded.errors) > 20:
        err_console.print(
            f"... and {len(loaded.errors) - 20} more input errors (see `evalq results {job_id}`)"
        )
    for warning in loaded.warnings[:10]:
        err_console.print(f"[yellow]warning:[/] {warning}")
    if not wait:
        _emit(client.summary(job_id), as_json, brief=True)
        return
    _emit(wait_with_progress(client, job_id, loaded.total, quiet=as_json), as_json)


def wait_with_progress(client: Any, job_id: str, total: int, *, quiet: bool = False) -> Any:
    """Wait for a job with a progress bar on stderr; returns the final summary."""
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(
        *columns, console=err_console, disable=quiet and not sys.stderr.isatty()
    ) as progress:
        task = progress.add_task(f"job {job_id}", total=total)
        waiting = False

        def on_redis(message: str | None) -> None:
            """Redis out of reach: say so once, keep the bar, and say when it answers again."""
            nonlocal waiting
            if message is not None and not waiting:
                progress.console.print(f"[yellow]{message}; still waiting[/]")
            elif message is None and waiting:
                progress.console.print("Redis answers again")
            waiting = message is not None
            label = f"job {job_id}" + (": waiting for Redis" if waiting else "")
            progress.update(task, description=label)

        return client.wait(
            job_id,
            on_progress=lambda done, n: progress.update(task, completed=done, total=n),
            on_redis=on_redis,
        )


def _emit(summary: Any, as_json: bool, brief: bool = False) -> None:
    if as_json:
        click.echo(summary.model_dump_json())
        return
    if brief:
        out_console.print(
            f"job {summary.job_id} enqueued: watch it with `evalq status {summary.job_id}`"
        )
        return
    from evalq.client.render import print_summary

    print_summary(out_console, summary)


@main.command()
@job_id_argument
@click.option("--wait", is_flag=True, help="Show progress and print the summary when done.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
@click.option(
    "--max-cost-usd",
    type=float,
    default=None,
    help="A new spend cap in US dollars (the total, spend so far included).",
)
@redis_option
def resume(
    job_id: str, wait: bool, as_json: bool, max_cost_usd: float | None, redis_url: str | None
) -> None:
    """Continue a paused or interrupted job with the rows not yet scored (cached calls are free)."""
    client = _client(redis_url)
    count = client.resume(job_id, max_cost_usd=max_cost_usd)
    err_console.print(f"job {job_id}: {count} rows enqueued again")
    if wait:
        _emit(
            wait_with_progress(
                client, job_id, client.store.config(job_id).rows_total, quiet=as_json
            ),
            as_json,
        )
    else:
        _emit(client.summary(job_id), as_json, brief=not as_json)


@main.command()
@job_id_argument
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
@redis_option
def cancel(job_id: str, as_json: bool, redis_url: str | None) -> None:
    """Stop a job cleanly: queued tasks skip it; rows already scored are kept."""
    client = _client(redis_url)
    if not (outcome := client.try_cancel(job_id)).changed:
        err_console.print(f"job {job_id} already {outcome.before}: nothing to cancel")
    _emit(client.summary(job_id), as_json)


@main.command()
@job_id_argument
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
@redis_option
def status(job_id: str, as_json: bool, redis_url: str | None) -> None:
    """Show a job's summary (also while it runs), with the errors that escaped its tasks (how
    many, the last, its task and age); batch mode adds each batch's state, request counts, age,
    time since its last poll and last error."""
    client = _client(redis_url)
    summary = client.summary(job_id)
    records = client.batches(job_id) if summary.mode == "batch" else []
    bound = client.batch_bound(job_id) if summary.mode == "batch" else None
    if as_json and summary.mode == "batch":
        data = json.loads(summary.model_dump_json())
        data["batches"] = [json.loads(r.model_dump_json()) for r in records]
        data["batches_max"] = bound
        click.echo(json.dumps(data))
        return
    _emit(summary, as_json)
    if records:
        from evalq.client.render import batch_notes, batches_table

        now = time.time()
        out_console.print(batches_table(records, now))
        if bound is not None:
            out_console.print(f"{len(records)} batches of at most {bound} for this job")
        for line in batch_notes(records, now):
            out_console.print(line, markup=False, highlight=False)


@main.command()
@click.option("--limit", default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@redis_option
def jobs(limit: int, as_json: bool, redis_url: str | None) -> None:
    """List recent jobs."""
    from rich.table import Table

    summaries = list(_client(redis_url).iter_jobs(limit))
    if as_json:
        click.echo(json.dumps([s.model_dump() for s in summaries]))
        return
    table = Table("job", "metric", "status", "rows", "mean", "judge")
    for s in summaries:
        mean = "n/a" if s.mean_score is None else f"{s.mean_score:.3f}"
        table.add_row(
            s.job_id,
            s.metric,
            s.status,
            f"{s.rows_done}/{s.rows_total}",
            mean,
            s.judge_model + (" (simulated)" if s.simulated else ""),
        )
    out_console.print(table)


@main.command()
@job_id_argument
@click.option(
    "--format", "fmt", type=click.Choice(["jsonl", "csv"]), default="jsonl", show_default=True
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write here instead of stdout.",
)
@redis_option
def results(job_id: str, fmt: str, out: Path | None, redis_url: str | None) -> None:
    """Write per-row results (also while the job runs)."""
    from evalq.client.render import results_csv, results_jsonl

    rows = _client(redis_url).results(job_id)
    text = results_csv(rows) if fmt == "csv" else "".join(results_jsonl(rows))
    if out is None:
        click.echo(text, nl=False)
    else:
        out.write_text(text, encoding="utf-8")
        err_console.print(f"wrote {len(rows)} rows to {out}")


@main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.option(
    "--pool",
    "-P",
    type=click.Choice(["gevent", "threads"]),
    default=None,
    help="gevent (hundreds of calls in flight per process) or threads (default: EVALQ_WORKER_POOL, gevent).",
)
@click.option(
    "--concurrency",
    "-c",
    type=int,
    default=None,
    help="Tasks at once (default: EVALQ_WORKER_CONCURRENCY, else 200 greenlets or 16 threads).",
)
@click.option("--loglevel", "-l", default="INFO", show_default=True)
@click.option("--hostname", "-n", default=None, help="Worker node name (default: evalq@HOST).")
@redis_option
@click.pass_context
def worker(
    ctx: click.Context,
    pool: str | None,
    concurrency: int | None,
    loglevel: str,
    hostname: str | None,
    redis_url: str | None,
) -> None:
    """Start a worker (judge calls wait on the network, so greenlets or threads). Extra args go
    to Celery.

    The process becomes `celery worker` (exec, same pid): Celery's own entry monkey-patches for
    gevent before it imports anything that uses sockets, ssl or threads, which this process has
    already done. The pool and concurrency go on in the environment, so the worker's settings
    size its Redis and HTTP connection pools for them."""
    _apply_overrides(redis_url)
    from worker.queues import QUEUE_QUESTIONS, QUEUE_ROWS
    from worker.settings import get_settings

    settings = get_settings()
    pool = pool or settings.worker_pool
    concurrency = concurrency or settings.model_copy(update={"worker_pool": pool}).concurrency
    os.environ["EVALQ_WORKER_POOL"] = pool
    os.environ["EVALQ_WORKER_CONCURRENCY"] = str(concurrency)
    argv = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "worker.app",
        "worker",
        f"--pool={pool}",
        f"--concurrency={concurrency}",
        f"--loglevel={loglevel}",
        "-Q",
        f"{QUEUE_QUESTIONS},{QUEUE_ROWS}",
        *(["-E"] if settings.task_events else []),  # events for Flower: EVALQ_TASK_EVENTS
        f"--hostname={hostname or 'evalq@%h'}",
        *ctx.args,
    ]
    _raise_open_files_limit()
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, argv)


def _raise_open_files_limit() -> None:
    """Each task at once may hold a Redis and an HTTP connection: a pool of hundreds passes a
    soft limit of 1024 open files long before the hard limit, so the worker takes the hard one."""
    import contextlib
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = max(soft, 65536) if hard == resource.RLIM_INFINITY else hard
    # Refused: the worker still starts; a huge pool may then run out of sockets.
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=9808, show_default=True, type=int)
@redis_option
def metrics(host: str, port: int, redis_url: str | None) -> None:
    """Serve job-level figures (rows done, score so far, 429s, limiter wait, tokens) for Prometheus."""
    from worker.metrics_exporter import serve

    serve(_client(redis_url).store, host, port)


@main.command()
@job_id_argument
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Write the report here.",
)
@click.option(
    "--max-rows",
    default=500,
    show_default=True,
    help="Rows shown in full (all rows count in the summary).",
)
@redis_option
def report(job_id: str, html_path: Path, max_rows: int, redis_url: str | None) -> None:
    """Write an HTML report: summary, per-tag chart, and per row what the judge saw and said."""
    from evalq.client.report import render_report

    client = _client(redis_url)
    html = render_report(
        client.summary(job_id),
        client.results(job_id),
        inputs=client.inputs(job_id),
        max_rows=max_rows,
        data_roots=client.data_roots(job_id),
    )
    html_path.write_text(html, encoding="utf-8")
    err_console.print(f"wrote {html_path} ({len(html) // 1024} KiB)")


def _side_specs(_ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> list[str]:
    """JOB or JOB:CANDIDATE, optionally NAME=JOB; each job id checked before anything
    reaches Redis."""
    from evalq.client.client import check_job_id
    from evalq.client.compare import split_spec
    from evalq.core.errors import JobNotFound

    try:
        for spec in value:
            check_job_id(split_spec(spec)[0])
    except JobNotFound as exc:
        raise click.BadParameter(str(exc)) from None
    return list(value)


def align_by(value: str | None) -> AlignBy | None:
    """--by as the alignment it names (click has checked the choice)."""
    return "id" if value == "id" else "prompt" if value == "prompt" else None


sides_argument = click.argument("sides", nargs=-1, required=True, callback=_side_specs)
align_option = click.option(
    "--by",
    type=click.Choice(["id", "prompt"]),
    default=None,
    help="Pair rows by id or by prompt (default: by id when the ids name the same prompts).",
)


@main.command()
@sides_argument
@align_option
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as one JSON object.")
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write an HTML report: per-tag bars with intervals, the rows that differ most.",
)
@click.option("--top", default=10, show_default=True, help="Rows that differ most, per pair.")
@redis_option
def compare(
    sides: list[str],
    by: str | None,
    as_json: bool,
    html_path: Path | None,
    top: int,
    redis_url: str | None,
) -> None:
    """Compare jobs (JOB, JOB:CANDIDATE, or NAME=JOB to name a side) on the rows they share:
    paired mean differences with intervals and p-values, per tag, and every pair with Holm's
    correction for more than two. One multi-candidate job alone compares its candidates."""
    from evalq.client.compare import compare_jobs
    from evalq.comparisons.comparison import comparison_dict

    client = _client(redis_url)
    comparison = compare_jobs(client, sides, by=align_by(by))
    if html_path is not None:
        from evalq.client.compare_report import media_lookup, render_comparison

        labels = {s.label: s for s in comparison.sides}
        html = render_comparison(
            comparison,
            media_of=media_lookup(
                {label: client.inputs(s.job_id, s.candidate) for label, s in labels.items()},
                {label: s.candidate for label, s in labels.items()},
            ),
            data_roots={label: client.data_roots(s.job_id) for label, s in labels.items()},
            top=top,
        )
        html_path.write_text(html, encoding="utf-8")
        err_console.print(f"wrote {html_path} ({len(html) // 1024} KiB)")
    if as_json:
        click.echo(json.dumps(comparison_dict(comparison, top=top)))
    else:
        from evalq.client.compare_render import print_comparison

        print_comparison(out_console, comparison, top=min(top, 5))


@main.command()
@sides_argument
@align_option
@click.option("--json", "as_json", is_flag=True, help="Print the leaderboard as one JSON object.")
@click.option(
    "--csv",
    "csv_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the leaderboard as CSV.",
)
@redis_option
def leaderboard(
    sides: list[str], by: str | None, as_json: bool, csv_path: Path | None, redis_url: str | None
) -> None:
    """Rank candidates by mean score on the rows all of them scored, with intervals, per-tag
    columns and which differences are significant (paired tests, Holm-corrected). Sides are
    jobs, JOB:CANDIDATE, or one multi-candidate job (its candidates)."""
    from evalq.client.compare import compare_jobs
    from evalq.comparisons.leaderboard import leaderboard as standings_of
    from evalq.comparisons.leaderboard import leaderboard_dict

    comparison = compare_jobs(_client(redis_url), sides, by=align_by(by))
    standings = standings_of(comparison)
    if csv_path is not None:
        from evalq.client.compare_render import leaderboard_csv

        csv_path.write_text(leaderboard_csv(standings), encoding="utf-8")
        err_console.print(f"wrote {csv_path}")
    if as_json:
        click.echo(json.dumps(leaderboard_dict(comparison, standings)))
    else:
        from evalq.client.compare_render import print_leaderboard

        print_leaderboard(out_console, comparison, standings)


@main.command(
    "fake-gemini",
    context_settings={
        "ignore_unknown_options": True,
        "allow_extra_args": True,
        "help_option_names": [],
    },
    add_help_option=False,
)
@click.pass_context
def fake_gemini(ctx: click.Context) -> None:
    """Serve the fake Gemini API (simulated judge) for offline runs: --port --latency-ms --rpm
    --rpd --fault-rate --seed --script; --help for all."""
    # A program of its own (fake_gemini/), run in this process's place: the client side does
    # not import it, so an installed service never carries the fake inside its runtime.
    os.execv(sys.executable, [sys.executable, "-m", "fake_gemini", *ctx.args])


def cli_entry() -> None:
    try:
        main(standalone_mode=False)
    except click.exceptions.Abort:
        err_console.print("aborted")
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except Exception as exc:
        # Imported only when something failed: `evalq --help` loads no models, no Redis client.
        import redis

        from evalq.core.errors import EvalqError

        if isinstance(exc, EvalqError):
            err_console.print(f"[red]error:[/] {exc}")
            sys.exit(2)
        if not isinstance(exc, redis.RedisError):
            raise
        url = os.environ.get("EVALQ_REDIS_URL", "the default redis://127.0.0.1:6379/0")
        where = url.rsplit("@", 1)[-1]  # never print a password
        err_console.print(f"[red]error:[/] Redis ({where}) did not answer: {exc}")
        sys.exit(3)


if __name__ == "__main__":
    cli_entry()
