"""`evalq calibrate`: judge setups ranked by agreement with human labels, each setup given as
`NAME:KEY=VALUE,...` in the words `evalq run` and `evalq.evaluate` already take."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import click

from evalq.client.cli.common import (
    echo_json,
    err_console,
    file_option,
    make_reader,
    out_console,
    redis_option,
)
from evalq.client.cli.help import examples
from evalq.client.output.terminal.visible import visible
from evalq.core.registry import metric_names

# evaluate keywords a setup does not set for itself: calibrate sets them, or they are the
# whole run's.
NOT_PER_SETUP = frozenset(
    {"name", "options", "settings", "base_dir", "candidates", "count_tokens", "group_by"}
)


def _own_value(key: str, value: str, where: str) -> Any:
    """One of evaluate's own keywords from text, checked (leniently: "0.5" is 0.5) by its
    annotation in evalq.client.api.EvaluateSpec."""
    from pydantic import TypeAdapter, ValidationError

    from evalq.client.api import EvaluateSpec
    from evalq.core.options import problem

    hints = typing.get_type_hints(EvaluateSpec, localns={"Settings": Any})
    try:
        return TypeAdapter(hints[key]).validate_python(value)
    except ValidationError as exc:
        raise click.BadParameter(f"{where}: {key}: {problem(exc.errors()[0])}") from None


def _flag_value(key: str, value: str, where: str) -> Any:
    """A metric flag's value from text, converted as `evalq run --KEY VALUE` would be."""
    from evalq.client.cli.metric_flags import _click_type
    from evalq.core.options import flag_fields

    info, flag = next((i, f) for name, i, f in flag_fields() if name == key)
    kind = _click_type(info.annotation, flag.file)
    if kind is None:
        return value
    try:
        return click.types.convert_type(kind).convert(value, None, None)
    except click.BadParameter as exc:
        raise click.BadParameter(f"{where}: {key}: {exc.message}") from None


def setup_keywords(spec: str) -> tuple[str, dict[str, Any]]:
    """NAME:KEY=VALUE,... as the setup's name and evaluate's keywords; a bad item names the
    setup and the key. KEY is a metric flag's name (same types, choices and files as `evalq
    run`), `judge_model` (repeated), `thinking_budget`/`thinking_level` with `ROLE=VALUE`, or
    one of evaluate's own keywords; all read from the options models, none listed by hand."""
    from evalq.client.api import EvaluateSpec
    from evalq.client.cli.metric_flags import job_options, thinking_flags
    from evalq.core.options import flag_fields

    name, sep, rest = spec.partition(":")
    where = f"setup {name.strip()!r}"
    if not sep or not name.strip():
        raise click.BadParameter(f"{spec!r}: expected NAME:KEY=VALUE,KEY=VALUE")
    flags = {n for n, _, _ in flag_fields()}
    own = set(EvaluateSpec.__annotations__) - NOT_PER_SETUP
    judges: list[str] = []
    thinking: dict[str, list[str]] = {"budget": [], "level": []}
    options: dict[str, Any] = {}
    keywords: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, eq, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or not value.strip():
            raise click.BadParameter(f"{where}: {item!r}: expected KEY=VALUE")
        if key in ("judge_model", "judge_models"):
            judges.append(value.strip())
        elif key in ("thinking_budget", "thinking_level"):
            thinking[key.removeprefix("thinking_")].append(value)
        elif key in flags:
            options[key] = _flag_value(key, value.strip(), where)
        elif key in own:
            keywords[key] = _own_value(key, value.strip(), where)
        else:
            known = sorted(flags | own | {"judge_model", "thinking_budget", "thinking_level"})
            raise click.BadParameter(f"{where}: unknown key {key!r}; keys: {', '.join(known)}")
    try:
        keywords |= job_options(**options)
    except click.BadParameter as exc:
        raise click.BadParameter(f"{where}: {exc.param_hint}: {exc.message}") from None
    if judges:
        keywords["judge_models"] = judges
    if thinking["budget"] or thinking["level"]:
        keywords["thinking"] = thinking_flags(tuple(thinking["budget"]), tuple(thinking["level"]))
    return name.strip(), keywords


def _setups(
    _ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for spec in value:
        name, keywords = setup_keywords(spec)
        if name in out:
            raise click.BadParameter(f"setup {name!r} is named twice")
        out[name] = keywords
    return out


def _jobs(_ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> dict[str, str]:
    """NAME=JOB per --job, JOB an id, a unique id prefix or a --name (found when the jobs are
    read: evalq.client.calibrate.read_setups)."""
    out: dict[str, str] = {}
    for spec in value:
        name, sep, job = spec.partition("=")
        if not sep or not name.strip() or not job.strip():
            raise click.BadParameter(f"{spec!r}: expected NAME=JOB")
        if name.strip() in out:
            raise click.BadParameter(f"setup {name.strip()!r} is named twice")
        out[name.strip()] = job.strip()
    return out


@click.command(
    epilog=examples(
        'evalq calibrate rated.jsonl --human rater --setup "short:template=fluency" --setup "long:template=summarization_quality"'
    )
)
@click.argument("dataset", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--human", required=True, metavar="COLUMN", help="The column of human labels.")
@click.option(
    "--setup",
    "setups",
    multiple=True,
    callback=_setups,
    metavar="NAME:KEY=VALUE,...",
    help="A judge setup to run on DATASET (repeat, two or more), e.g. "
    "fast:judge_model=gemini-2.5-flash,template=fluency,thinking_budget=judge=0.",
)
@click.option(
    "--job",
    "jobs",
    multiple=True,
    callback=_jobs,
    metavar="NAME=JOB",
    help="Read a job already run instead (its id, a unique id prefix or its --name; repeat, "
    "two or more, all on one dataset).",
)
@click.option(
    "--metric",
    type=click.Choice(metric_names()),
    default="pointwise",
    show_default=True,
    help="The metric every setup runs.",
)
@click.option(
    "--group-by",
    "group_by",
    default=None,
    metavar="COLUMN",
    help="Pairwise accuracy over rows sharing this column's value (default: the prompt).",
)
@file_option("--html", "html_path", "Also write the tables as a small HTML page.")
@click.option("--json", "as_json", is_flag=True, help="Print everything as one JSON object.")
@redis_option
def calibrate(
    dataset: Path | None,
    human: str,
    setups: dict[str, dict[str, Any]],
    jobs: dict[str, str],
    metric: str,
    group_by: str | None,
    html_path: Path | None,
    as_json: bool,
    redis_url: str | None,
) -> None:
    """Rank judge setups by how well their row scores agree with the human labels in
    COLUMN: Spearman and Kendall tau-b with 95% intervals, the Gecko paper's pairwise
    accuracy, cost per row, paired differences (Holm across pairs), and the best per unit of
    cost. Run setups on DATASET (--setup) or read jobs already run (--job)."""
    from evalq.client.calibrate import calibrate as run_calibration
    from evalq.core.human.calibration import calibration_dict

    if bool(setups) == bool(jobs):
        raise click.UsageError("give --setup (with DATASET) or --job, not both")
    if setups and dataset is None:
        raise click.UsageError("--setup runs on DATASET: name the dataset file")
    if jobs and dataset is not None:
        raise click.UsageError("--job reads jobs already run: leave DATASET out")
    reader = make_reader(redis_url)
    if setups:
        err_console().print(
            visible(f"running {len(setups)} setups on {dataset} ({metric})"), markup=False
        )
    result = run_calibration(
        dataset,
        human=human,
        setups=setups or None,
        jobs=jobs or None,
        metric=metric,
        group_by=group_by,
        reader=reader,
    ).calibration
    if html_path is not None:
        from evalq.client.cli.read import write_html
        from evalq.client.output.html.calibration import render_calibration_html

        write_html(html_path, render_calibration_html(result))
    if as_json:
        echo_json(json.dumps(calibration_dict(result)))
    else:
        from evalq.client.output.terminal.calibration import print_calibration

        print_calibration(out_console(), result)
