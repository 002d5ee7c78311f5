"""How `evalq --help` and every `evalq COMMAND --help` read: the commands listed by the task they
serve (a newcomer looks for "how do I watch a job", not for a name), each command's help ending
with examples that parse (tests/unit/client/test_help.py parses every one)."""

from __future__ import annotations

import click

# The tasks, in the order a job goes through them, and their commands: every command of
# `evalq` is in exactly one (a test checks), so a new command has to be placed.
SECTIONS: dict[str, tuple[str, ...]] = {
    "Run": ("run", "rank", "regrade", "rubrics"),
    "Watch": ("status", "wait", "jobs"),
    "Read": ("results", "report"),
    "Compare": ("compare", "leaderboard", "drift", "calibrate"),
    "Operate": ("worker", "resume", "cancel", "turns", "archive", "metrics", "fake-gemini"),
}
EXAMPLES_TITLE = "Examples:"


def examples(*lines: str) -> str:
    """A command's epilog: its examples, one per line, kept as written (click rewraps other
    paragraphs; \\b stops it for this one)."""
    return "\b\n" + EXAMPLES_TITLE + "\n" + "\n".join(f"  {line}" for line in lines)


class ReaderGone(Exception):
    """Standard output's reader closed the pipe; raised past click, which would exit 1."""


class TaskGroup(click.Group):
    """`evalq` itself: commands under the task they serve instead of one alphabetical list."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise ReaderGone from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        width = formatter.width - 6 - max(len(name) for name in self.commands)
        for title, names in SECTIONS.items():
            rows = [
                (name, command.get_short_help_str(width))
                for name in names
                if (command := self.get_command(ctx, name)) is not None and not command.hidden
            ]
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
