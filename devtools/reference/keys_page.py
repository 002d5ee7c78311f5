"""The Redis keys reference (docs/reference/redis-keys.md): evalq.worker.store.key_table's rows, one
a key (the limiter's two schedules share one). The rows are built by calling
evalq.worker.store.keys, and tests/unit/worker/store/test_key_table.py checks they cover every key
it makes, so the page cannot name a key the code does not write or miss one it does."""

from __future__ import annotations

from devtools.reference.markdown_cells import cell, table
from evalq.worker.store.key_table import ROWS


def markdown() -> str:
    rows = [
        (", ".join(f"`{shape}`" for shape in row.shapes), row.type, cell(row.holds)) for row in ROWS
    ]
    return table(("key", "type", "holds"), rows)
