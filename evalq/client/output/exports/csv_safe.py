"""CSV cells a spreadsheet opens as text, never as a formula: datasets' and judges' texts reach
colleagues' Excel, LibreOffice or Google Sheets, and a formula can fetch URLs or run commands.
Every CSV file evalq writes is written through ``safe_writer``."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from typing import Any, TextIO

# A text starting so gets a leading single quote, as OWASP advises for CSV injection; a text that
# is only a decimal number (a score written as "-0.5") is no formula and stays as written.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def safe_cell(value: object) -> object:
    """``value`` as a CSV cell that can't be read as a formula."""
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS):
        return value
    if _NUMBER.fullmatch(value):
        return value
    return "'" + value


def safe_row(cells: Iterable[object]) -> list[object]:
    return [safe_cell(cell) for cell in cells]


class SafeWriter:
    """csv.writer's writerow, every row's cells made safe first."""

    def __init__(self, stream: TextIO, **dialect: Any) -> None:
        self._writer = csv.writer(stream, **dialect)

    def writerow(self, cells: Iterable[object]) -> None:
        self._writer.writerow(safe_row(cells))


def safe_writer(stream: TextIO, **dialect: Any) -> SafeWriter:
    """A CSV writer on ``stream`` (csv.writer's dialect arguments) whose cells can't run."""
    return SafeWriter(stream, **dialect)
