"""One job's results as a pandas DataFrame (Job.results(), evalq.history): the table the CSV
export writes, with Python values in its cells."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evalq.client.output.exports.result_columns import extra_names, metric_table
from evalq.client.output.judged_texts import judged_columns
from evalq.core.models import RowResult

if TYPE_CHECKING:
    import pandas as pd


def results_frame(
    rows: list[RowResult], texts: Sequence[Mapping[str, str]] | None = None
) -> pd.DataFrame:
    """One row per result; a multi-candidate job's frame has a `candidate` column after the
    id (one row per dataset row and candidate). Each metric's own columns (rating,
    explanation, winner, labels...: evalq.client.result_columns), then what the judge was
    shown (`texts`, each row's: evalq.client.judged_texts) under the dataset's column names,
    come before `questions` and `details`, and the dataset's extra columns keep their names
    (`extra:NAME` on a clash)."""
    import pandas as pd

    cells = any(r.candidate is not None for r in rows)
    names, metric = metric_table(rows)
    shown = list(texts) if texts is not None else [{} for _ in rows]
    records = []
    for r, own in zip(rows, metric, strict=True):
        record: dict[str, Any] = {"id": r.id}
        if cells:
            record["candidate"] = r.candidate
        record |= {
            "line": r.line,
            "prompt": r.prompt,
            "status": r.status,
            "score": r.score,
            "coverage": r.coverage,
            "reason": r.reason,
            "error": r.error,
            "simulated": r.simulated,
        }
        record.update({f"tag:{t}": v for t, v in r.tag_scores.items()})
        record.update({name: own.get(name) for name in names})
        records.append(record)
    taken = {key for record in records for key in record} | {"questions", "details"}
    judged = judged_columns(shown, metric, sorted(taken))
    for r, record, seen in zip(rows, records, shown, strict=True):
        record.update({header: seen.get(name) for name, header in judged.items()})
        record["questions"] = [q.model_dump() for q in r.questions]
        record["details"] = r.details
    taken |= set(judged.values())
    renamed = extra_names(rows, sorted(taken))
    for r, record in zip(rows, records, strict=True):
        record.update({renamed[k]: v for k, v in r.extra.items()})
    return pd.DataFrame.from_records(records)
