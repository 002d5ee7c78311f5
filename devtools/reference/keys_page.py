"""The Redis keys reference (docs/reference/redis-keys.md): evalq.worker.store.key_table's rows,
one a key (the limiter's two schedules share one), built by calling evalq.worker.store.keys, so
the page can't name a key the code does not write or miss one it does."""

from __future__ import annotations

from devtools.reference.markdown_cells import cell, table
from evalq.worker.store.key_table import ROWS


def markdown() -> str:
    rows = [
        (", ".join(f"`{shape}`" for shape in row.shapes), row.type, cell(row.holds)) for row in ROWS
    ]
    return table(("key", "type", "holds"), rows)
