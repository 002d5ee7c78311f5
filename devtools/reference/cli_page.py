"""The command-line reference (docs/reference/cli.md): a section per `evalq` command with its
usage and a table of its options, each with its type and default, read from the click commands
so the manual shows the flags `--help` shows."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from typing import Any

import click
import click.core

from devtools.reference.markdown_cells import cell, table

_UNSET = getattr(click.core, "UNSET", object())  # click's "no default given"
WIDTH = 100  # of the text blocks (usage, examples), as a wide terminal shows them


def walk(
    command: click.Command, ctx: click.Context
) -> Iterator[tuple[click.Command, click.Context]]:
    """The command and every subcommand below it, each with its context, a group's in the order
    its `--help` lists them."""
    yield command, ctx
    if isinstance(command, click.Group):
        for name in sorted(command.list_commands(ctx)):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from walk(sub, click.Context(sub, info_name=name, parent=ctx))


def shown_type(option: click.Option) -> str:
    if option.is_flag and not option.count:
        kind = "flag"
    elif isinstance(option.type, click.Choice):
        kind = "one of " + ", ".join(f"`{choice}`" for choice in option.type.choices)
    else:
        kind = option.type.name
    return kind + (", repeatable" if option.multiple else "")


def shown_default(option: click.Option, ctx: click.Context) -> str:
    """The default a reader can act on; blank where there is none (or a flag is off), and the
    prose says what applies when a default comes from a setting."""
    value: Any = option.get_default(ctx, call=False)
    if value is None or value is _UNSET or callable(value) or value in ((), []):
        return ""
    if option.is_flag and not option.count and isinstance(value, bool):
        return "on" if value else ""
    return f"`{value}`"


def options_table(command: click.Command, ctx: click.Context) -> str:
    rows = []
    for param in command.get_params(ctx):
        if not isinstance(param, click.Option) or param.hidden:
            continue
        # A choice's values are in its type column, not repeated as a metavar.
        plain = param.is_flag or param.count or isinstance(param.type, click.Choice)
        metavar = "" if plain else " " + param.make_metavar(ctx)
        names = ", ".join(f"`{flag}{metavar}`" for flag in param.opts)
        if param.secondary_opts:
            names += " / " + ", ".join(f"`{flag}`" for flag in param.secondary_opts)
        help_text = cell(param.help or "")
        rows.append((names, shown_type(param), shown_default(param, ctx), help_text))
    return table(("option", "type", "default", "what it does"), rows) if rows else ""


def description(text: str) -> str:
    """click's help text as Markdown: `\\b` paragraphs kept as written, the others reflowed;
    what follows `\\f` is for the code, not the reader."""
    out = []
    for paragraph in text.split("\f", 1)[0].split("\n\n"):
        if paragraph.lstrip().startswith("\b"):
            out.append(text_block(paragraph.lstrip()[1:].strip("\n")))
        elif paragraph.strip():
            out.append(" ".join(paragraph.split()))
    return "\n\n".join(out)


def text_block(text: str) -> str:
    return f"```text\n{text.rstrip()}\n```"


def section(command: click.Command, ctx: click.Context) -> str:
    level = "#" * min(ctx.command_path.count(" ") + 2, 6)
    parts = [f"{level} {ctx.command_path}", description(command.help or "")]
    formatter = ctx.make_formatter()
    formatter.width = WIDTH
    command.format_usage(ctx, formatter)
    parts.append(text_block(formatter.getvalue().removeprefix("Usage: ")))
    parts.append(options_table(command, ctx))
    if isinstance(command, click.Group):
        parts.append(
            "\n".join(
                f"- [`{sub_ctx.command_path}`](#{sub_ctx.command_path.replace(' ', '-')}): "
                f"{sub.get_short_help_str(WIDTH)}"
                for sub, sub_ctx in walk(command, ctx)
                if sub_ctx.parent is ctx
            )
        )
    epilog = ctx.make_formatter()
    epilog.width = WIDTH
    command.format_epilog(ctx, epilog)
    if epilog.getvalue().strip():
        parts.append(text_block(textwrap.dedent(epilog.getvalue()).strip("\n")))
    return "\n\n".join(part for part in parts if part) + "\n"


def markdown() -> str:
    from evalq.client.cli import main

    return "\n".join(
        section(c, ctx) for c, ctx in walk(main, click.Context(main, info_name="evalq"))
    )
