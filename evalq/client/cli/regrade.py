"""`evalq regrade JOB`: judge an ended job's stored inputs again with another judge (or the same
one today), with no dataset file, and report the new job as `evalq run` does."""

from __future__ import annotations

from pathlib import Path

import click

from evalq.client.cli.attach import attached, fail_under_option, finish, note_job
from evalq.client.cli.common import (
    emit,
    err_console,
    job_id_argument,
    json_option,
    make_client,
    redis_option,
    wait_option,
)
from evalq.client.cli.help import examples
from evalq.client.output.terminal.visible import shown


@click.command(
    epilog=examples(
        "evalq regrade JOB --judge-model gemini-2.5-pro --wait",
        "evalq regrade JOB --rows 50 --seed 1 --json",
    )
)
@job_id_argument
@click.option(
    "--judge-model",
    "--judge",
    "judge_models",
    multiple=True,
    help="The judge model to ask (default: the job's own); repeat for several judges.",
)
@click.option(
    "--thinking-budget",
    "thinking_budgets",
    multiple=True,
    metavar="ROLE=N",
    help="Thinking tokens per role, over the job's own (as `evalq run`). Repeatable.",
)
@click.option(
    "--thinking-level",
    "thinking_levels",
    multiple=True,
    metavar="ROLE=LEVEL",
    help="Gemini 3 models: minimal, low, medium or high per role. Repeatable.",
)
@click.option(
    "--samples",
    default=None,
    metavar="K|auto",
    help="Judge each unit K times (or `auto`: adaptively), in place of the job's setting.",
)
@click.option(
    "--rows",
    type=click.IntRange(min=1),
    default=None,
    help="Judge only N of the job's dataset rows: the first N in dataset order, or with "
    "--seed a random sample of N drawn with that seed (default: every row).",
)
@click.option("--seed", type=int, default=None, help="With --rows: draw a sample, seeded.")
@click.option(
    "--mode",
    type=click.Choice(["online", "batch"]),
    default="online",
    show_default=True,
    help="batch: through Gemini's Batch API at half the price, as `evalq run --mode batch`.",
)
@click.option(
    "--vertex-batch-prefix",
    default=None,
    metavar="gs://BUCKET/FOLDER",
    help="--mode batch on Vertex AI: where requests and results go in Cloud Storage.",
)
@click.option(
    "--cache",
    "use_cache",
    is_flag=True,
    help="Reuse judge replies already cached (by default the judge is asked again).",
)
@click.option("--max-cost-usd", type=float, default=None, help="Pause at this spend (USD).")
@click.option("--name", default=None, help="What to call the new job in `evalq jobs`.")
@wait_option
@json_option
@fail_under_option
@redis_option
def regrade(
    job: str,
    judge_models: tuple[str, ...],
    thinking_budgets: tuple[str, ...],
    thinking_levels: tuple[str, ...],
    samples: str | None,
    rows: int | None,
    seed: int | None,
    mode: str,
    vertex_batch_prefix: str | None,
    use_cache: bool,
    max_cost_usd: float | None,
    name: str | None,
    wait: bool,
    as_json: bool,
    fail_under: float | None,
    redis_url: str | None,
) -> None:
    """Judge JOB's rows again, read from Redis or the archive (the dataset file is not
    needed): the same metric, options, questions (Gecko: the job's own, no rubric written) and
    responses, with another judge, thinking or samples. The new job names JOB in `evalq status`;
    a row whose media file is gone refuses the regrade, naming its line."""
    from evalq.client.cli.metric_flags import thinking_flags
    from evalq.client.cli.submit import checked_name, ready_to_wait, wait_with_progress
    from evalq.client.jobs.lookup import resolve

    if seed is not None and rows is None:
        raise click.BadParameter("only with --rows", param_hint="--seed")
    if fail_under is not None and not wait:
        raise click.BadParameter("only with --wait", param_hint="--fail-under")
    thinking = thinking_flags(thinking_budgets, thinking_levels)
    client = make_client(redis_url)
    source = resolve(client, job)
    count: int | str | None = samples
    if isinstance(samples, str) and samples.strip().isdigit():
        count = int(samples)
    submitted = client.regrade(
        source,
        mode=mode,
        vertex_batch_prefix=vertex_batch_prefix,
        judge_models=list(judge_models) or None,
        thinking=thinking,
        samples=count,
        rows=rows,
        seed=seed,
        name=checked_name(name),
        use_cache=use_cache,
        max_cost_usd=max_cost_usd,
    )
    job_id, loaded = submitted.job_id, submitted.dataset
    config = client.config(job_id)

    def say() -> None:
        judges = ", ".join(config.judges)
        err_console().print(
            f"job [bold]{job_id}[/]: regrades {source}, {config.metric}, {loaded.total} "
            f"rows from {Path(config.dataset).name}'s stored inputs, judge {shown(judges)}"
        )
        for warning in loaded.warnings[:10]:
            err_console().print(f"[yellow]warning:[/] {shown(warning)}")

    if not wait:
        note_job(job_id)
        say()
        emit(client.summary(job_id), as_json, brief=True)
        return
    with attached(job_id) as stop:
        ready_to_wait()
        say()
        summary = wait_with_progress(client, job_id, loaded.total, quiet=as_json, stop=stop)
    finish(summary, as_json, fail_under)
