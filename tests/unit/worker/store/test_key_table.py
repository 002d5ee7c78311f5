"""The table of Redis keys (evalq.worker.store.key_table, the site's generated page
reference/redis-keys by devtools/reference/keys_page.py) lists every key evalq.worker.store.keys
makes, each once, with the shape evalq.worker.store.keys gives it, and no key it does not make; the
page shows that table, row for row (tests/unit/docs checks the built page)."""

from __future__ import annotations

from collections import Counter

from devtools.reference.keys_page import markdown
from evalq.worker.store import keys
from evalq.worker.store.key_table import ROWS, every_key_shape


def table_shapes() -> list[str]:
    return [shape for row in ROWS for shape in row.shapes]


def test_every_key_of_the_key_module_has_a_row_and_every_row_a_key() -> None:
    listed = table_shapes()
    assert [s for s, n in Counter(listed).items() if n > 1] == [], "a key listed twice"
    made = every_key_shape()
    assert sorted(made - set(listed)) == [], (
        "keys evalq.worker.store.keys makes that the table lacks"
    )
    assert sorted(set(listed) - made) == [], "rows for keys evalq.worker.store.keys does not make"


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


def test_the_page_has_a_line_a_row_in_order() -> None:
    lines = markdown().splitlines()[2:]
    assert len(lines) == len(ROWS)
    for line, row in zip(lines, ROWS, strict=True):
        assert line.startswith("| " + ", ".join(f"`{shape}`" for shape in row.shapes) + " |"), line
