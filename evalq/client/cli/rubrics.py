"""`evalq rubrics DATASET --out FILE`: every prompt's question set written into a dataset file to
review, edit and run as it stands (evalq.client.rubrics does the work)."""

from __future__ import annotations

from pathlib import Path

import click

from evalq.client.cli.common import make_reader, redis_option
from evalq.client.cli.help import examples
from evalq.client.cli.metric_flags import data_root_option
from evalq.client.output.terminal.visible import visible


@click.command(
    epilog=examples(
        "evalq rubrics prompts.jsonl --out questions.jsonl",
        "evalq run gecko-image questions.jsonl --questions replace --wait",
    )
)
@click.argument("dataset", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The file to write: JSONL, or CSV when it ends in .csv.",
)
@click.option(
    "--metric",
    default=None,
    help="gecko-image, gecko-video or rubric (default: gecko-video when the dataset has a "
    "video column, gecko-image for an image column, rubric for a response column, else "
    "gecko-image).",
)
@click.option(
    "--rubric-model",
    default=None,
    help="The model that writes the rubrics (default: EVALQ_JUDGE_MODEL, as a run's).",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Write every rubric afresh instead of reading the rubric and call caches.",
)
@click.option(
    "--map",
    "column_map",
    multiple=True,
    metavar="FIELD=COLUMN",
    help="Read the dataset's COLUMN as the metric's FIELD. Repeatable.",
)
@data_root_option
@redis_option
def rubrics(
    dataset: Path,
    out: Path,
    metric: str | None,
    rubric_model: str | None,
    no_cache: bool,
    column_map: tuple[str, ...],
    data_roots: tuple[Path, ...],
    redis_url: str | None,
) -> None:
    """Write the question set of every prompt of a Gecko DATASET to a file to review and edit,
    from the rubric cache or written by the rubric judge; run it with --questions replace."""
    from evalq.client.cli.metric_flags import column_map_flags
    from evalq.client.rubrics import write_rubrics

    reader = make_reader(redis_url)
    report = write_rubrics(
        reader.settings,
        reader.job_control,
        dataset,
        out,
        metric=metric,
        rubric_model=rubric_model,
        use_cache=not no_cache,
        column_map=column_map_flags(column_map),
        data_roots=list(data_roots) or None,
        progress=lambda line: click.echo(visible(line), err=True),
    )
    for line in report.lines():  # paths and a command: the user's text, shown
        click.echo(visible(line))
