"""A groundedness row's human sentence labels laid over evalq's own split of the response
(evalq.metrics.groundedness.sentences), which is what the judge's labels count per."""

from __future__ import annotations

import re
from typing import Any

from evalq.core.human.labels import (
    SENTENCE_LABELS_COLUMN,
    BadLabel,
    sentence_entries,
    sentence_label,
)
from evalq.core.models import RowResult

Compared = list[tuple[str, str]]  # (the judge's label, the rater's)
LeftOut = list[tuple[str, str]]  # (reason, message)


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def judged_sentences(row: RowResult) -> list[dict[str, Any]] | None:
    """The response's sentences with words, each with the label that counts, from the first
    judge that scored the row (every judge labels the same sentences); None when no judge did."""
    for judge in (row.details.get("judges") or {}).values():
        if isinstance(judge, dict) and judge.get("status") == "ok":
            sentences = judge.get("response_sentences") or []
            return [s for s in sentences if s.get("status") != "no_words"]
    return None


def sentence_pairs(row: RowResult) -> tuple[Compared, LeftOut]:
    """The row's (judge label, human label) pairs and its left-out labels. `human_labels` is
    one label per sentence of evalq's split in order (sentences without words not counted), or
    {"sentence", "label"} items matched by text; what can't be placed is left out, never guessed."""
    value = row.extra.get(SENTENCE_LABELS_COLUMN)
    where = f"row {row.id}"
    if value is None or (isinstance(value, str) and not value.strip()):
        return [], []
    try:
        entries = sentence_entries(value, where)
    except BadLabel as bad:
        return [], [(bad.reason, bad.message)]
    left_out: LeftOut = []
    sentences = judged_sentences(row)
    if sentences is None:
        why = f"{where}: no judge labelled the response ({row.reason or 'unscored'})"
        return [], [("row_unscored", why)] * len(entries)
    by_text = {_norm(str(s.get("sentence", ""))): s for s in sentences}
    positional = all(sentence is None for sentence, _ in entries)
    if positional and len(entries) != len(sentences):
        why = (
            f"{where}: {SENTENCE_LABELS_COLUMN} has {len(entries)} labels but evalq split the "
            f"response into {len(sentences)} sentences"
        )
        return [], [("not_in_split", why)] * len(entries)
    compared: Compared = []
    for i, (text, raw) in enumerate(entries):
        at = f"{where} sentence {i + 1}"
        try:
            human = sentence_label(raw, at)
        except BadLabel as bad:
            left_out.append((bad.reason, bad.message))
            continue
        if text is None:
            target = sentences[i] if positional else None
        else:
            target = by_text.get(_norm(text))
        if target is None and text is None:
            why = f"{at}: a bare label among {{sentence, label}} objects cannot be placed"
            left_out.append(("not_in_split", why))
            continue
        if target is None:
            shown = text if len(str(text)) <= 40 else str(text)[:39] + "…"
            why = f"{at}: {shown!r} is not a sentence of evalq's split of the response"
            left_out.append(("not_in_split", why))
            continue
        judge = target.get("label")
        if judge is None:
            left_out.append(("unscored", f"{at}: the judge gave it no label"))
            continue
        compared.append((str(judge), human))
    return compared, left_out
