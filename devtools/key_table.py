"""Write the README's table of Redis keys from worker.key_table: `python -m devtools.key_table`
rewrites it in place, `--check` exits 1 when the README's differs. The table is the block of
`|` lines after the paragraph that starts with INTRO (README: Architecture)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from worker.key_table import ROWS

README = Path(__file__).resolve().parents[1] / "README.md"
INTRO = "Redis key schema"


def markdown() -> str:
    """The table as the README shows it, one row a key (the limiter's two schedules share one)."""
    lines = ["| key | type | holds |", "| --- | --- | --- |"]
    for row in ROWS:
        shapes = ", ".join(f"`{shape}`" for shape in row.shapes)
        lines.append(f"| {shapes} | {row.type} | {row.holds} |")
    return "\n".join(lines) + "\n"


def table_span(text: str) -> tuple[int, int]:
    """Where the key table is in the README's text: (start, end) offsets of its lines."""
    intro = text.index(f"\n{INTRO}")
    start = text.index("\n|", intro) + 1
    end = start
    while end < len(text) and text.startswith("|", end):
        end = text.index("\n", end) + 1
    return start, end


def with_table(text: str) -> str:
    start, end = table_span(text)
    return text[:start] + markdown() + text[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="only say whether it is current")
    args = parser.parse_args(argv)
    text = README.read_text(encoding="utf-8")
    wanted = with_table(text)
    if args.check:
        if wanted != text:
            print(
                "README.md's key table is not worker.key_table's: run python -m devtools.key_table"
            )
            return 1
        return 0
    if wanted != text:
        README.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
