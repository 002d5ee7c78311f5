"""The flags `evalq run` and `evalq rank` share, and the metric flags among them, built from the
metrics' options models (evalq.core.options): no metric flag is written here. They are built
when run or rank first parses or prints its help, so `evalq --help` loads no pydantic model."""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from evalq.client.cli.attach import fail_under_option
from evalq.client.cli.common import json_option, redis_option, wait_option

# Where a command may read local media from: `run`, `rank` and `rubrics` read it alike.
data_root_option = click.option(
    "--data-root",
    "data_roots",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Read local media only under this folder; repeat for several "
    "(default: EVALQ_DATA_ROOTS, else the dataset's folder).",
)


def read_text(path: Path, flag: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise click.BadParameter(f"cannot read {path}: {exc}", param_hint=flag) from None


def _click_type(annotation: Any, file: str | None) -> Any:
    """The click type of a field: a file path, a choice of its Literal's values, int, or text."""
    if file == "text":
        return click.Path(dir_okay=False, path_type=Path)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    inner = args[0] if typing.get_origin(annotation) in (typing.Union, types.UnionType) else None
    if typing.get_origin(inner) is typing.Literal:
        return click.Choice([str(value) for value in typing.get_args(inner)])
    if args == [int, str]:
        return _COUNT_OR_WORD
    return int if inner is int else None


class _CountOrWord(click.ParamType[Any]):
    """A flag that takes a count or a word (--samples 3, --samples auto): digits are the
    number, anything else the text, checked by the options model."""

    name = "count-or-word"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return int(value) if isinstance(value, str) and value.strip().isdigit() else value


_COUNT_OR_WORD = _CountOrWord()


def _is_switch(annotation: Any) -> bool:
    """A `bool | None` field is a switch: the flag alone turns it on (absent: not given)."""
    return [a for a in typing.get_args(annotation) if a is not type(None)] == [bool]


def metric_flags() -> list[click.Option]:
    """One option per field the options models offer as a flag (the union over metrics)."""
    from evalq.core.options import flag_fields, flag_name

    return [
        click.Option([flag_name(name)], is_flag=True, default=None, help=flag.help)
        if _is_switch(info.annotation)
        else click.Option(
            [flag_name(name)],
            type=_click_type(info.annotation, flag.file),
            default=None,
            help=flag.help,
        )
        for name, info, flag in flag_fields()
    ]


def job_options(**values: Any) -> dict[str, Any]:
    """Metric options from the metric flags' values (by field name; None or empty: not
    given); files are read here, so workers on other hosts need no copy. Each value is checked
    by the model that declares it; a bad one names its flag."""
    from pydantic import ValidationError

    from evalq.core.options import flag_fields, flag_name, problem

    options: dict[str, Any] = {}
    for name, info, flag in flag_fields():
        value = values.get(name)
        if value is None or value == "":
            continue
        if flag.file == "text":
            value = read_text(Path(value), flag_name(name))
        elif flag.file == "text-or-name" and flag.text_into and Path(value).is_file():
            options[flag.text_into] = read_text(Path(value), flag_name(name))
            value = Path(value).name
        try:
            options[name] = _field_adapter(info).validate_python(value, strict=True)
        except ValidationError as exc:
            raise click.BadParameter(problem(exc.errors()[0]), param_hint=flag_name(name)) from None
    return options


def _field_adapter(info: Any) -> Any:
    from typing import Annotated

    from pydantic import TypeAdapter

    return TypeAdapter(Annotated[info.annotation, *info.metadata])


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


def column_map_flags(items: tuple[str, ...]) -> dict[str, str]:
    """--map FIELD=COLUMN items as the job's column map; a bad item names itself, in one line
    (a DatasetError: exit 2, as a refused dataset)."""
    from evalq.core.column_map import parse_assignments

    return parse_assignments(items)


def choice_option(flag: str, choices: list[str], help: str) -> Callable[[Any], Any]:
    """A choice whose first value is the default, shown in the help."""
    return click.option(
        flag, type=click.Choice(choices), default=choices[0], show_default=True, help=help
    )


class MetricCommand(click.Command):
    """run and rank: the metric flags join the shared ones, after --no-cache, when the command
    first needs its parameters (to parse, or to print its help)."""

    _built = False

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        if not self._built:
            at = [p.name for p in self.params].index("no_cache") + 1
            self.params[at:at] = metric_flags()
            self._built = True
        return super().get_params(ctx)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """After the options, the values a metric flag offers, a line each (a rating
        metric's built-in templates), as the metrics' options models list them; then the
        examples, last, as every command's help ends."""
        from evalq.core.options import flag_fields

        for _, _, flag in flag_fields():
            if flag.listing:
                with formatter.section(flag.listing_title):
                    formatter.write_dl(list(flag.listing))
        super().format_epilog(ctx, formatter)


def shared_flags(func: Callable[..., Any]) -> Callable[..., Any]:
    """Flags shared by `run` and `rank` (the metric flags are added by MetricCommand)."""
    for option in reversed(
        [
            wait_option,
            json_option,
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
            data_root_option,
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
                "--priority",
                type=click.Choice(["high", "normal", "low"]),
                default="normal",
                show_default=True,
                help="The job's turns on shared workers: high goes ahead of normal jobs, low "
                "only takes turns others leave; `evalq turns JOB` changes it while it runs.",
            ),
            click.option(
                "--max-in-flight",
                type=click.IntRange(min=1),
                default=None,
                help="At most this many of the job's rows in the broker or running at once "
                "(default: no cap beyond the cluster's window).",
            ),
            choice_option(
                "--mode",
                ["online", "batch"],
                "batch: send the judge calls through Gemini's Batch API at half the "
                "price; turnaround up to 24 hours (on Vertex AI through Cloud Storage: "
                "--vertex-batch-prefix).",
            ),
            choice_option(
                "--on-expiry",
                ["resubmit", "online"],
                "--mode batch: a batch that ends EXPIRED/FAILED has its unanswered "
                "requests sent again in a new batch, or online.",
            ),
            click.option(
                "--vertex-batch-prefix",
                default=None,
                metavar="gs://BUCKET/FOLDER",
                help="--mode batch on Vertex AI: where the requests are written and the "
                "results read in Cloud Storage (default: EVALQ_VERTEX_BATCH_PREFIX).",
            ),
            click.option(
                "--thinking-level",
                "thinking_levels",
                multiple=True,
                metavar="ROLE=LEVEL",
                help="Gemini 3 models: minimal, low, medium or high per role. Repeatable.",
            ),
            click.option(
                "--name",
                default=None,
                help="What to call the job in `evalq jobs` (printable, at most 100 characters).",
            ),
            fail_under_option,
            click.option(
                "--map",
                "column_map",
                multiple=True,
                metavar="FIELD=COLUMN",
                help="Read the dataset's COLUMN as the metric's FIELD (e.g. "
                "query=customer_message). Repeatable.",
            ),
            click.option(
                "--group-by",
                "group_by",
                multiple=True,
                metavar="COLUMN",
                help="Scores and intervals per value of this dataset column (one the metric "
                "does not read, e.g. category), in status and report. Repeatable.",
            ),
            redis_option,
        ]
    ):
        func = option(func)
    return func
