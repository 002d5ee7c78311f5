"""Markdown table cells from free text: the generated tables take prose written for code
(docstrings over several lines, `|` in a JSON example), which would otherwise break a row."""

from __future__ import annotations

from collections.abc import Sequence


def cell(text: str) -> str:
    """One line, with `|` escaped so it stays inside its cell."""
    return " ".join(text.split()).replace("|", "\\|")


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
