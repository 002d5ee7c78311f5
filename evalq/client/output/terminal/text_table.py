"""A two-column box table in plain text for the job summary: `evalq status` is called again and
again by scripts, and loading rich would be a tenth of its start-up. Cells are shown through
`visible`, never read as markup, and measured in terminal cells."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from evalq.client.output.terminal.visible import visible

BORDER_CELLS = 7  # "│ " + label + " │ " + value + " │"
MIN_VALUE_CELLS = 20


def char_cells(char: str) -> int:
    if char.isascii():
        return 1
    if unicodedata.category(char) in ("Mn", "Me") or char == "\u200d":
        return 0  # combining marks, variation selectors, the emoji joiner
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def cells(text: str) -> int:
    """How many terminal columns the text takes."""
    return sum(char_cells(c) for c in text)


def _split_word(word: str, width: int) -> list[str]:
    """A word longer than the column, cut into pieces that fit it."""
    pieces, piece, used = [], "", 0
    for char in word:
        size = char_cells(char)
        if piece and used + size > width:
            pieces.append(piece)
            piece, used = "", 0
        piece += char
        used += size
    return [*pieces, piece] if piece else pieces


def wrap(text: str, width: int) -> list[str]:
    """Lines of at most `width` cells, broken between words where it can be. Spaces inside a
    line are kept (an indent, the two before "95% CI"); a wrapped line starts at its word."""
    lines: list[str] = []
    line, used = "", 0
    for gap, word in re.findall(r"( *)([^ ]+)", text):
        piece = word if lines and not line else gap + word
        size = cells(piece)
        if used + size <= width:
            line, used = line + piece, used + size
            continue
        if line:
            lines.append(line)
            piece, size = word, cells(word)
        if size > width:
            *full, piece = _split_word(piece, width)
            lines.extend(full)
            size = cells(piece)
        line, used = piece, size
    return [*lines, line] if line or not lines else lines


def column_widths(rows: Sequence[tuple[str, str]], width: int) -> tuple[int, int]:
    """The label and value columns' widths: as wide as their longest cell while the table fits
    in `width`. Past that the value column wraps, keeping at least a third of the room (20
    cells at the least), and only a label longer than the rest (a --group-by value) wraps."""
    label = max((cells(a) for a, _ in rows), default=1) or 1
    value = max((cells(b) for _, b in rows), default=1) or 1
    room = max(width - BORDER_CELLS, 4)  # two cells a column at least: a wide character fits
    if label + value <= room:
        return label, value
    keep = min(value, max(room // 3, MIN_VALUE_CELLS))
    label = max(2, min(label, room - keep))
    return label, max(2, room - label)


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - cells(text))


def box_table(
    title: str, rows: Sequence[tuple[str, str]], width: int, *, label_style: str = "{}"
) -> list[str]:
    """The title, then the rows boxed, each cell wrapped to its column. `label_style` formats a
    padded label (the caller's bold); it must add no visible cells."""
    clean = [(visible(a), visible(b)) for a, b in rows]
    left, right = column_widths(clean, width)
    lines = wrap(visible(title), left + right + BORDER_CELLS) if title else []
    lines.append(f"┌{'─' * (left + 2)}┬{'─' * (right + 2)}┐")
    for label, value in clean:
        label_lines, value_lines = wrap(label, left), wrap(value, right)
        for i in range(max(len(label_lines), len(value_lines))):
            a = label_lines[i] if i < len(label_lines) else ""
            b = value_lines[i] if i < len(value_lines) else ""
            lines.append(f"│ {label_style.format(_pad(a, left))} │ {_pad(b, right)} │")
    lines.append(f"└{'─' * (left + 2)}┴{'─' * (right + 2)}┘")
    return lines
