"""A groundedness row in a report: each judge's labels on the response's sentences, marked as
counted or not by the outcome they led to, and who wrote the response when the model under
test did."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalq.core.models import RowResult
from evalq.core.row_view import (
    JudgedInput,
    Sentence,
    SentenceBlock,
    Tone,
    ViewParts,
    shown,
    texts_of,
    unscored_text,
)


def _block(judge: str, entry: Mapping[str, Any]) -> SentenceBlock:
    """An ineligible response is not grounded whatever its labels say, so its labels are
    greyed."""
    grounded = entry.get("grounded")
    why = shown(entry.get("why"))
    eligible = entry.get("eligible")
    note = None
    tone: Tone
    if entry.get("status") not in (None, "ok") or grounded is None:
        outcome, tone = f"unscored: {why or unscored_text(entry)}", "unscored"
        note = "labels not counted: this judge is unscored for the row"
    elif eligible is False:
        reason = shown(entry.get("eligibility_reason")) or "the response does not answer"
        outcome, tone = "✗ not grounded: response not eligible", "bad"
        note = f"response not eligible: {reason.rstrip('. ')}. Its sentence labels are not counted."
    elif grounded not in (0, 1):  # repeated samples still split on a sentence
        outcome, tone = (
            f"split vote: grounded {grounded:.2f}" + (f": {why}" if why else ""),
            "plain",
        )
    else:
        outcome = ("✓ grounded" if grounded == 1 else "✗ not grounded") + (
            f": {why}" if why else ""
        )
        tone = "ok" if grounded == 1 else "bad"
    raw = entry.get("sentences") or entry.get("response_sentences") or []
    sentences = tuple(
        Sentence(
            shown(s.get("sentence")),
            shown(s.get("label"))
            or ("undecided" if s.get("status") == "undecided" else "unlabelled"),
            shown(s.get("rationale")),
            counted=note is None,
        )
        for s in raw
        if isinstance(s, Mapping)
    )
    return SentenceBlock(f"judge {judge}", outcome, tone, sentences, note)


def groundedness_view(result: RowResult, named: Sequence[JudgedInput]) -> ViewParts:
    details = result.details
    blocks = tuple(
        _block(judge, entry)
        for judge, entry in (details.get("judges") or {}).items()
        if isinstance(entry, Mapping)
    )
    writer = details.get("candidate_model")
    written = details.get("response_source") == "candidate" and writer
    texts = texts_of(named, {"response": f"{{column}} (written by {writer})"} if written else {})
    tone: Tone
    if result.score is None:
        headline, tone = "unscored", "unscored"
    else:
        headline = f"grounded share {result.score:.2f}" if len(blocks) > 1 else ""
        tone = "ok" if result.score == 1 else "bad"
        if not headline and result.score not in (0, 1):  # a split vote of repeated samples
            headline, tone = f"split vote: grounded {result.score:.2f}", "plain"
        if not headline:
            headline = "✓ grounded" if result.score == 1 else "✗ not grounded"
    return ViewParts(headline=headline, tone=tone, texts=texts, sentence_blocks=blocks)
