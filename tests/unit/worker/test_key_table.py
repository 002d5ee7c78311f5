"""The table of Redis keys (worker.key_table, written into the README by devtools/key_table.py)
lists every key worker.keys makes, each once, with the shape worker.keys gives it, and no key
it does not make; the README's table is that table, row for row."""

from __future__ import annotations

from collections import Counter

from devtools.key_table import README, markdown, table_span, with_table
from worker import keys
from worker.key_table import ROWS, every_key_shape


def table_shapes() -> list[str]:
    return [shape for row in ROWS for shape in row.shapes]


def test_every_key_of_the_key_module_has_a_row_and_every_row_a_key() -> None:
    listed = table_shapes()
    assert [s for s, n in Counter(listed).items() if n > 1] == [], "a key listed twice"
    made = every_key_shape()
    assert sorted(made - set(listed)) == [], "keys worker.keys makes that the table lacks"
    assert sorted(set(listed) - made) == [], "rows for keys worker.keys does not make"


def test_the_shapes_are_the_key_modules_own() -> None:
    """Pinned, so a placeholder or a function renamed without a migration shows here too."""
    made = every_key_shape()
    for shape in (
        keys.JOBS,
        "evalq:job:{job}",
        "evalq:job:{job}:verdicts:{line}",
        "evalq:job:{job}:file:{sha256}:lock",
        "evalq:job:{job}:batch:{batch}:units",
        "evalq:rubric:{sha256}:claim",
        "evalq:limiter:{model}:tokens",
    ):
        assert shape in made, shape


def test_every_row_says_what_the_key_holds() -> None:
    for row in ROWS:
        assert row.type in {"STRING", "HASH", "LIST", "SET", "ZSET"}, row
        assert row.holds and "|" not in row.holds and "\n" not in row.holds, row


def test_the_readme_shows_the_table() -> None:
    text = README.read_text(encoding="utf-8")
    start, end = table_span(text)
    assert text[start:end] == markdown(), "run python -m devtools.key_table"
    assert with_table(text) == text


def test_a_stale_readme_table_is_found() -> None:
    """The check can fail: a row dropped from the README's table is put back by the writer."""
    text = README.read_text(encoding="utf-8")
    start, end = table_span(text)
    table = text[start:end]
    row = next(line for line in table.splitlines(keepends=True) if "`evalq:turns`" in line)
    dropped = table.replace(row, "", 1)
    stale = text[:start] + dropped + text[end:]
    assert stale != text
    assert with_table(stale) == text
