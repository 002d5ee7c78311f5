"""`evalq results` as JSON Lines: one job's rows, one JSON object a line."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

from evalq.core.models import RowResult


def results_jsonl(
    rows: Iterable[RowResult], texts: Sequence[Mapping[str, str]] | None = None
) -> Iterable[str]:
    """One JSON object per row: the result as stored, then with `texts` (each row's, in
    order: evalq.client.judged_texts) `inputs`, what the judge was shown under the dataset's
    column names."""
    for n, row in enumerate(rows):
        # A one-candidate job's lines stay as they were: no candidate key.
        line = row.model_dump_json(exclude={"candidate"} if row.candidate is None else None)
        if texts is not None:
            shown = json.dumps(texts[n], ensure_ascii=False, separators=(",", ":"))
            line = f'{line[:-1]},"inputs":{shown}}}'
        yield line + "\n"
