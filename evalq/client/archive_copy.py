"""`evalq archive --from URL --to URL`: one archive's history copied into another, with a
progress bar and a last line of counts, every URL shown without its password."""

from __future__ import annotations

import sys

import click

from evalq.worker.archive.place import ArchivePlace, ArchiveURLError, archive_place


def place_of(url: str, flag: str) -> ArchivePlace:
    """The archive a flag names; "off" or a URL evalq can't use is a usage error naming it."""
    try:
        place = archive_place(url)
    except ArchiveURLError as exc:
        raise click.BadParameter(str(exc), param_hint=flag) from None
    if place is None:
        raise click.BadParameter(
            "names no archive: give a sqlite:/// or postgresql:// URL", param_hint=flag
        )
    return place


def copy_archive(from_url: str, to_url: str) -> str:
    """Copy; the last line to print ("copied N jobs (M already there) from A to B")."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from evalq.client.output.terminal.console import TerminalConsole
    from evalq.client.output.terminal.visible import shown
    from evalq.worker.archive.copy import CopyPlan, copy_all

    source, target = place_of(from_url, "--from"), place_of(to_url, "--to")
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(
        *columns, console=TerminalConsole(stderr=True), disable=not sys.stderr.isatty()
    ) as progress:
        task = progress.add_task(shown(f"copying to {target.shown}"), total=None)

        def on_plan(plan: CopyPlan) -> None:
            progress.update(task, total=len(plan.to_copy))

        plan = copy_all(source, target, on_plan, lambda _job_id: progress.advance(task))
    copied = len(plan.to_copy)
    return (
        f"copied {copied} job{'' if copied == 1 else 's'} ({plan.already} already there) "
        f"from {source.shown} to {target.shown}"
    )
