"""`evalq compare` and `evalq leaderboard`: jobs (or one job's candidates) side by side."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from evalq.client.cli import exit_codes
from evalq.client.cli.common import (
    echo_json,
    err_console,
    file_option,
    make_reader,
    out_console,
    redis_option,
)
from evalq.client.cli.help import examples
from evalq.client.cli.read import write_html
from evalq.client.output.terminal.visible import shown, visible

if TYPE_CHECKING:
    from evalq.comparisons.align import AlignBy
    from evalq.comparisons.comparison import Comparison


def _side_specs(_ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> list[str]:
    """JOB or JOB:CANDIDATE, optionally LABEL=JOB; JOB an id, a unique id prefix or a --name,
    found once the command has its Redis and archive (evalq.client.compare.resolve_spec)."""
    from evalq.client.compare import split_spec

    for spec in value:
        if not split_spec(spec)[0].strip():
            raise click.BadParameter(f"{spec!r}: no job in it (JOB, JOB:CANDIDATE, LABEL=JOB)")
    return list(value)


def align_by(value: str | None) -> AlignBy | None:
    """--by as the alignment it names (click has checked the choice)."""
    return "id" if value == "id" else "prompt" if value == "prompt" else None


sides_argument = click.argument("sides", nargs=-1, required=True, callback=_side_specs)
allow_mixed_option = click.option(
    "--allow-mixed",
    "allow_mixed",
    is_flag=True,
    help="Accept sides judged differently (judge models or versions, templates, thinking, "
    "validator mode, samples, question set): the differences are still named first, but do "
    "not fail the command.",
)
align_option = click.option(
    "--by",
    type=click.Choice(["id", "prompt"]),
    default=None,
    help="Pair rows by id or by prompt (default: by id when the ids name the same prompts).",
)


def sides_command(what: str, *usage: str) -> Callable[[Callable[..., None]], click.Command]:
    """A command over sides (compare, leaderboard): its examples, then the sides, --by and
    --json, in the one order and wording both take them; its own options follow."""

    def make(run: Callable[..., None]) -> click.Command:
        json_option = click.option(
            "--json", "as_json", is_flag=True, help=f"Print the {what} as one JSON object."
        )
        for param in (json_option, align_option, sides_argument):
            run = param(run)
        return click.command(epilog=examples(*usage))(run)

    return make


@sides_command(
    "comparison",
    "evalq compare baseline=JOB_A candidate=JOB_B --html compare.html",
    "evalq compare JOB_A JOB_B --fail-under -0.02",
)
@file_option(
    "--html",
    "html_path",
    "Also write an HTML report: per-tag bars with intervals, the rows that differ most.",
)
@click.option("--top", default=10, show_default=True, help="Rows that differ most, per pair.")
@click.option(
    "--group-by",
    "group_by",
    multiple=True,
    metavar="COLUMN",
    help="Also compare per value of this dataset column (repeatable), Holm over each pair's "
    'groups; rows without it form the group "(no value)".',
)
@click.option(
    "--fail-under",
    "fail_under",
    type=float,
    default=None,
    metavar="X",
    help="Exit 1 when a pair's mean paired difference A - B (A the first side named; in the "
    "compared value's units: rating points for pointwise, a share for the others) is below "
    "X, or the pair has no paired row; with --group-by, each group of each pair too. One "
    "line per shortfall goes to stderr. Sides judged differently fail it too, unless "
    "--allow-mixed.",
)
@allow_mixed_option
@redis_option
def compare(
    sides: list[str],
    by: str | None,
    as_json: bool,
    html_path: Path | None,
    top: int,
    group_by: tuple[str, ...],
    fail_under: float | None,
    allow_mixed: bool,
    redis_url: str | None,
) -> None:
    """Compare jobs (JOB, JOB:CANDIDATE, or LABEL=JOB to label a side; JOB is an id, a unique
    id prefix or the job's --name) on the rows they share:
    paired mean differences with intervals and p-values, per tag, and every pair with Holm's
    correction for more than two. One multi-candidate job alone compares its candidates.
    Each metric is compared on its own row value: Gecko's question share, pointwise's mean
    rating (1-5), pairwise's win share of A, groundedness's grounded share. Where the sides
    were judged differently (judge versions, templates, thinking...), the first lines say so."""
    from evalq.client.compare import compare_jobs
    from evalq.comparisons.comparison import comparison_dict

    reader = make_reader(redis_url)
    comparison = compare_jobs(reader, sides, by=align_by(by), group_by=list(group_by))
    if html_path is not None:
        from evalq.client.output.html.comparison import media_lookup, render_comparison

        labels = {s.label: s for s in comparison.sides}
        inputs = {label: reader.inputs(s.job_id, s.candidate) for label, s in labels.items()}
        html = render_comparison(
            comparison,
            media_of=media_lookup(inputs, {label: s.candidate for label, s in labels.items()}),
            data_roots={label: reader.data_roots(s.job_id) for label, s in labels.items()},
            top=top,
            inputs=inputs,
            summaries={label: reader.summary(s.job_id) for label, s in labels.items()},
            configs={label: reader.config(s.job_id) for label, s in labels.items()},
        )
        write_html(html_path, html)
    if as_json:
        echo_json(json.dumps(comparison_dict(comparison, top=top)))
    else:
        from evalq.client.output.terminal.comparison import print_comparison

        print_comparison(out_console(), comparison, top=min(top, 5))
    if fail_under is not None:
        check_threshold(comparison, fail_under, allow_mixed=allow_mixed)


def check_threshold(comparison: Comparison, threshold: float, *, allow_mixed: bool) -> None:
    """--fail-under: one line per setup difference (unless allowed) and per pair or group
    below the threshold, then exit 1. A difference the judge may have made is no pass."""
    from evalq.comparisons.thresholds import shortfalls

    refused = refuse_mixed(comparison, "not checked against --fail-under", allow_mixed)
    below = shortfalls(comparison, threshold)
    for shortfall in below:
        _say(f"below --fail-under: {shortfall.line(threshold, comparison.value.label)}")
    if refused or below:
        raise SystemExit(exit_codes.BELOW_THRESHOLD)


def refuse_mixed(comparison: Comparison, what: str, allow_mixed: bool) -> bool:
    """Unless --allow-mixed: a line on stderr per setup difference; True when there was one."""
    if allow_mixed or not comparison.mixed:
        return False
    for difference in comparison.setup_differences:
        _say(f"{what}: {difference.line()} (--allow-mixed accepts it)")
    return True


def _say(line: str) -> None:
    err_console().print(shown(line), soft_wrap=True)


@sides_command(
    "leaderboard",
    "evalq leaderboard JOB_A JOB_B JOB_C",
    "evalq leaderboard MULTI_CANDIDATE_JOB --csv board.csv",
)
@file_option("--csv", "csv_path", "Also write the leaderboard as CSV.")
@click.option(
    "--group-by",
    "group_by",
    multiple=True,
    metavar="COLUMN",
    help="Also rank per value of this dataset column (repeatable); significance per group is "
    "Holm-corrected over each pair's groups, as in compare --group-by.",
)
@allow_mixed_option
@redis_option
def leaderboard(
    sides: list[str],
    by: str | None,
    as_json: bool,
    csv_path: Path | None,
    group_by: tuple[str, ...],
    allow_mixed: bool,
    redis_url: str | None,
) -> None:
    """Rank candidates by mean score on the rows all of them scored, with intervals, per-tag
    columns and which differences are significant (paired tests, Holm-corrected). Sides are
    jobs (an id, a unique id prefix or a --name), JOB:CANDIDATE, LABEL=JOB, or one
    multi-candidate job (its candidates). Sides judged differently (judge versions, templates,
    thinking...) are named first, and the board is printed but exits 1, unless --allow-mixed:
    it would rank the judges as much as them."""
    from evalq.client.compare import compare_jobs
    from evalq.comparisons.leaderboard import group_leaderboards, leaderboard_dict
    from evalq.comparisons.leaderboard import leaderboard as standings_of

    reader = make_reader(redis_url)
    comparison = compare_jobs(reader, sides, by=align_by(by), group_by=list(group_by))
    standings = standings_of(comparison)
    groups = group_leaderboards(comparison)
    if csv_path is not None:
        from evalq.client.output.exports.csv_tables import leaderboard_csv

        csv_path.write_text(leaderboard_csv(standings, groups), encoding="utf-8")
        err_console().print(f"wrote {visible(csv_path)}", markup=False)
    if as_json:
        echo_json(json.dumps(leaderboard_dict(comparison, standings, groups if group_by else None)))
    else:
        from evalq.client.output.terminal.comparison import print_leaderboard

        print_leaderboard(out_console(), comparison, standings, groups)
    if refuse_mixed(comparison, "not a ranking of the candidates alone", allow_mixed):
        raise SystemExit(exit_codes.BELOW_THRESHOLD)
