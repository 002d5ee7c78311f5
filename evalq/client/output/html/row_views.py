"""One row as a person reads it, whatever its metric: the metric's own view of it around what every
row has. The report and the comparison report both render these, and name the judged texts as
the exports do (evalq.client.output.judged_texts), so a row reads the same in every view."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from evalq.client.output.judged_texts import named_inputs
from evalq.core.metric import known_metric
from evalq.core.models import JobConfig, MediaRef, RowInput, RowResult
from evalq.core.row_view import RowView, Text, questions_view


def shows_media(metric: str) -> bool:
    """Whether a report shows the metric's rows' media as thumbnails; a metric this evalq does
    not have (or a side with none) shows whatever media its rows have."""
    known = known_metric(metric) if metric else None
    return known is None or known.shows_media


def row_view(
    metric: str, result: RowResult, row_input: RowInput | None, config: JobConfig | None = None
) -> RowView:
    """The row as a person reads it; `config` (the job's) names --map and --candidates
    columns as the dataset does. Never raises on odd details: a report must render whatever a
    job stored (a row from an older version, a failed row with no details)."""
    known = known_metric(metric)
    named = named_inputs(metric, row_input, result, config) if row_input and known else []
    parts = questions_view(result, named) if known is None else known.view(result, named, row_input)
    texts = parts.texts
    if known is not None and not known.shows_media:  # media by name, beside the texts
        texts += tuple(
            Text(j.column, ref.value.rsplit("/", 1)[-1] if ref.kind == "path" else ref.value[:200])
            for j in named
            if isinstance(ref := j.value, MediaRef) and ref.kind != "inline"
        )
    if result.status == "failed":
        parts = replace(parts, headline=f"failed ({result.reason or 'error'})", tone="bad")
    kept = result.model_dump(include={"status", "score", "error", "simulated", "coverage", "extra"})
    name = result.id + (f" · {result.candidate}" if result.candidate else "")
    return RowView(name=name, **kept, **vars(replace(parts, texts=texts)))


def input_for(
    inputs: Mapping[Any, RowInput], result: RowResult, fallback: RowInput | None = None
) -> RowInput | None:
    """A result's stored input: by (id, candidate) when the inputs hold every cell of a
    multi-candidate job, else by id (one candidate's cells, or a one-candidate job)."""
    found = inputs.get((result.id, result.candidate)) if result.candidate else None
    if found is None:
        found = inputs.get(result.id)
    if found is not None and result.candidate and found.candidate not in (None, result.candidate):
        return fallback  # another candidate's cell: its texts are not this row's
    return found or fallback
