"""What the judge was shown of each row (Metric.judged_inputs), under the dataset's own column
names and its media by path or address: one rule for the exports and the report pages alike."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evalq.core.candidates import candidate_field, cell_candidates
from evalq.core.metric import get_metric
from evalq.core.models import JobConfig, MediaRef, RowInput, RowResult
from evalq.core.row_view import JudgedInput

INPUT_PREFIX = "input:"  # a judged column whose name evalq's columns use for something else


def media_name(ref: MediaRef) -> str:
    """A media file as the export names it: its path or address, never its bytes; inline
    data (a data: URI, an inline part) as what it is and its size."""
    if ref.kind != "inline":
        return ref.value
    size = len("".join(ref.value.split()).rstrip("=")) * 3 // 4  # base64: 4 characters, 3 bytes
    return f"inline {ref.mime_type or 'data'}, {size} bytes"


def _column(
    column_map: Mapping[str, str], row: RowInput, field: str, judged_field: str | None
) -> str:
    """The dataset's name for one of the row's fields: a --candidates cell's judged field by
    its candidate's column, a field the metric read from another column by that column
    (RowInput.read_from), a field read through --map by the mapped column."""
    if row.candidate is not None and field == judged_field:
        return row.candidate
    read = row.read_from.get(field, field)
    return column_map.get(read, read)


def named_inputs(
    metric: str, row: RowInput, result: RowResult, config: JobConfig | None = None
) -> list[JudgedInput]:
    """What the judge was shown of one stored row, in the order shown, each under the
    dataset's column name. Without the job's config (a page built from rows alone) a --map or
    --candidates column can't be known, so those fields keep the metric's names."""
    column_map: Mapping[str, str] = config.column_map if config is not None else {}
    judged_field = None
    if config is not None and cell_candidates(config.metric, config.options) is not None:
        judged_field = candidate_field(config.metric)
    return [
        JudgedInput(field, _column(column_map, row, field, judged_field), value)
        for field, value in get_metric(metric).judged_inputs(row, result).items()
    ]


def judged_texts(
    config: JobConfig, results: Sequence[RowResult], inputs: Iterable[RowInput]
) -> list[dict[str, str]]:
    """Per result (in its order), what its judge was shown: column -> text or media name. A
    row refused at load was stored with no input, and shows nothing."""
    by_cell = {(row.id, row.candidate): row for row in inputs}
    out: list[dict[str, str]] = []
    for result in results:
        row = by_cell.get((result.id, result.candidate))
        texts: dict[str, str] = {}
        if row is not None:
            for judged in named_inputs(config.metric, row, result, config):
                value = judged.value
                text = media_name(value) if isinstance(value, MediaRef) else value
                if judged.column == "prompt" and text == result.prompt:
                    continue  # evalq's own prompt column holds it
                texts.setdefault(judged.column, text)
        out.append(texts)
    return out


def judged_columns(
    texts: Sequence[Mapping[str, str]],
    own: Sequence[Mapping[str, Any]],
    taken: Iterable[str],
) -> dict[str, str]:
    """A table's judged columns: each column's header, in the order first met. `own` is each
    row's metric cells (evalq.client.output.exports.result_columns) and `taken` every header
    already in the table. A name the table has, holding the same text in every row, is left
    out (the row's `prompt`, groundedness's `response`); one it has for something else gets
    `input:NAME`."""
    used = set(taken)
    names: dict[str, str] = {}
    for name in dict.fromkeys(k for t in texts for k in t):
        if name not in used:
            names[name] = name
            continue
        same = all(
            t.get(name) is None or c.get(name) == t.get(name)
            for t, c in zip(texts, own, strict=True)
        )
        if not same:
            names[name] = f"{INPUT_PREFIX}{name}"
    return names
