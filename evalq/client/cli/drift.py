"""`evalq drift OLD NEW`: the same inputs judged by two judges, what changed, and whether it is
more than the judge's own noise."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from evalq.client.cli.common import (
    echo_json,
    err_console,
    file_option,
    make_client,
    make_reader,
    out_console,
    redis_option,
)
from evalq.client.cli.help import examples
from evalq.client.cli.read import write_html

if TYPE_CHECKING:
    from evalq.client.reads import JobReader


@click.command(
    epilog=examples(
        "evalq drift OLD_JOB NEW_JOB",
        "evalq drift OLD_JOB NEW_JOB --retest-job RETEST_JOB --html drift.html",
        "evalq drift OLD_JOB NEW_JOB --retest 50 --json",
    )
)
@click.argument("old")
@click.argument("new")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@file_option(
    "--html",
    "html_path",
    "Also write an HTML page: the figures, and the rows that changed "
    "most with both judges' verdicts and explanations side by side.",
)
@click.option(
    "--retest",
    "retest",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Where neither job has repeats: judge N of the old job's rows again with its own "
    "judge (a regrade) and read the judge's noise from it.",
)
@click.option(
    "--retest-job",
    "retest_job",
    default=None,
    metavar="JOB",
    help="A job of the old judge on the same rows again, read as the judge's own noise.",
)
@click.option(
    "--human",
    "human",
    default=None,
    metavar="COLUMN",
    help="A dataset column of the people's labels: say which judge agrees better with them "
    "(default: the jobs' own --human labels, where they have them).",
)
@click.option(
    "--group-by",
    "group_by",
    multiple=True,
    metavar="COLUMN",
    help="Also the score's change per value of this dataset column (repeatable).",
)
@click.option("--top", default=10, show_default=True, help="Rows that changed most, shown.")
@redis_option
def drift(
    old: str,
    new: str,
    as_json: bool,
    html_path: Path | None,
    retest: int | None,
    retest_job: str | None,
    human: str | None,
    group_by: tuple[str, ...],
    top: int,
    redis_url: str | None,
) -> None:
    """What changed between two jobs on the same inputs judged by two judges (OLD and NEW: ids,
    unique id prefixes or --names): the share of verdicts changed and which way, agreement
    (kappa, Krippendorff's alpha), the score's change with a paired interval, the candidates'
    order (Kendall's tau, the pairs that swap), the rows that changed most; each beside the
    old judge's own noise, and one line: "drift beyond noise" or "within the judge's own
    noise"."""
    from evalq.client.drift import drift_jobs, page_sides, retest_rows

    if retest is not None and retest_job is not None:
        raise click.UsageError("give --retest N or --retest-job JOB, not both")
    reader: JobReader
    if retest is not None:
        client = make_client(redis_url)
        err_console().print(f"retest: {retest} rows of the old job judged again by its judge")
        retest_job = retest_rows(client, old, retest)
        err_console().print(f"retest: job {retest_job}", markup=False)
        reader = client
    else:
        reader = make_reader(redis_url)
    report = drift_jobs(
        reader, old, new, retest_job=retest_job, human=human, group_by=group_by, top=top
    )
    if html_path is not None:
        from evalq.client.output.html.drift import render_drift

        write_html(html_path, render_drift(report, page_sides(reader, report)))
    if as_json:
        echo_json(report.model_dump_json())
    else:
        from evalq.client.output.terminal.drift import print_drift

        print_drift(out_console(), report, top=min(top, 5))
