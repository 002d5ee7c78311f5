"""One judge's verdict on a row: its labels checked against the context (an excerpt not found
there makes a `supported` unsupported) and scored, grounded 1/0 and the supported fraction.
"""

from __future__ import annotations

from collections.abc import Iterable
from statistics import fmean
from typing import Literal

from pydantic import BaseModel, Field

from evalq.core.models import (
    UnscoredReason,
    Verdict,
)
from evalq.metrics.groundedness.excerpts import ContextIndex
from evalq.metrics.groundedness.labels import (
    LabelConflict,
    LabelledSentence,
    Labelling,
    ResponseSentence,
)
from evalq.metrics.groundedness.parsing import (
    LABELS,
    NEEDS_ATTRIBUTION,
    ParsedGrounding,
)
from evalq.metrics.groundedness.plan import JudgeUnit

# ---- one judge's verdict --------------------------------------------------------------------


class JudgeResult(BaseModel):
    """One judge's view of a row; what the row shows per judge."""

    judge_model: str
    status: Literal["ok", "unscored"]
    grounded: int | float | None = None  # a float only for a split vote of repeated samples
    supported_fraction: float | None = None  # over the sentences that need attribution
    # label -> sentences of the response, by the label that counts for each
    counts: dict[str, int] = Field(default_factory=dict)
    excerpts_rejected: int = 0
    eligible: bool | None = None  # None: the judge's reply gave no eligibility verdict
    eligibility_reason: str = ""
    why: str = ""  # one line on the outcome
    # Our split of the response, each sentence with the label that counts for it.
    response_sentences: list[ResponseSentence] = Field(default_factory=list)
    sentences: list[LabelledSentence] = Field(default_factory=list)  # as the judge labelled
    missing: list[int] = Field(default_factory=list)  # still unlabelled after the re-ask
    asked_again: list[int] = Field(default_factory=list)  # named in the re-ask
    conflicting_labels: list[LabelConflict] = Field(default_factory=list)
    reason: UnscoredReason | None = None
    detail: str | None = None
    simulated: bool = False


def check_sentences(parsed: ParsedGrounding, context: ContextIndex) -> list[LabelledSentence]:
    """Verify every excerpt; a `supported` whose evidence is not in the context is unsupported."""
    out = []
    for s in parsed.sentences:
        item = LabelledSentence(
            sentence=s.sentence,
            label=s.label,
            judge_label=s.label,
            rationale=s.rationale,
            excerpt=s.excerpt,
        )
        if s.label in ("supported", "contradictory"):
            check = context.check(s.excerpt)
            item.excerpt_check, item.excerpt_similarity = check.status, check.similarity
            if s.label == "supported" and not check.found:
                item.label = "unsupported"
                item.note = (
                    "labelled supported without an excerpt"
                    if check.status == "missing"
                    else "labelled supported, but its excerpt is not in the context"
                    + (f" (best match {check.similarity:.2f})" if check.similarity else "")
                )
        out.append(item)
    return out


def score_labelling(
    judge_model: str,
    labelling: Labelling,
    eligible: bool | None,
    eligibility_reason: str,
    simulated: bool = False,
) -> JudgeResult:
    """Grounded (1/0) and the supported fraction from the labels that count for the response's
    own sentences; no_rad counts for nothing. A sentence still without a label makes the
    judge unscored (incomplete_labels), never grounded; an ineligible response is 0 whatever
    its labels, so it needs none."""
    sentences = labelling.response_sentences()
    conflicts = labelling.conflicts(sentences)
    counts = {label: 0 for label in LABELS}
    for s in sentences:
        if s.label is not None:
            counts[s.label] += 1
    needing = [s for s in sentences if s.label in NEEDS_ATTRIBUTION]
    supported = counts["supported"]
    fraction = supported / len(needing) if needing else None
    failing = counts["unsupported"] + counts["contradictory"]
    missing = labelling.missing() if eligible is not False else []
    result = JudgeResult(
        judge_model=judge_model,
        status="ok",
        supported_fraction=fraction,
        counts=counts,
        excerpts_rejected=sum(1 for s in labelling.items if s.label != s.judge_label),
        eligible=eligible,
        eligibility_reason=eligibility_reason,
        response_sentences=sentences,
        sentences=labelling.items,
        missing=missing,
        asked_again=labelling.asked_again,
        conflicting_labels=conflicts,
        simulated=simulated,
    )
    if eligible is False:
        grounded, why = 0, f"ineligible: {eligibility_reason or 'the response does not answer'}"
    elif missing:
        shown = "; ".join(f"{i + 1}: {_clip(labelling.sentences[i])}" for i in missing)
        detail = (
            f"{len(missing)} of {len(sentences)} sentence(s) of the response have no label"
            f"{' even when asked again' if labelling.asked_again else ''} ({shown})"
        )
        return result.model_copy(
            update={
                "status": "unscored",
                "supported_fraction": None,
                "reason": "incomplete_labels",
                "detail": detail,
                "why": f"unscored (incomplete_labels): {detail}",
            }
        )
    elif failing:
        parts = [f"{counts[k]} {k}" for k in ("unsupported", "contradictory") if counts[k]]
        grounded, why = 0, f"{' and '.join(parts)} of {len(needing)} sentence(s) needing support"
    elif not needing:
        grounded, why = 0, "no sentence makes a claim from the context"
    else:
        grounded, why = 1, f"all {supported} sentence(s) needing support are supported"
    if conflicts:
        why += (
            f"; {len(conflicts)} sentence(s) got differing labels, the worse counts "
            f"(sentence {', '.join(str(c.index + 1) for c in conflicts)})"
        )
    return result.model_copy(update={"grounded": grounded, "why": why})


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def unit_result(unit: JudgeUnit, verdict: Verdict | None) -> JudgeResult:
    model = unit.judge_model
    if verdict is None:
        return JudgeResult(
            judge_model=model,
            status="unscored",
            reason="judge_error",
            detail="no verdict was recorded",
            why="unscored: no verdict was recorded",
        )
    if isinstance(verdict.value, dict):  # scored, or unscored with its labelling to show
        return JudgeResult.model_validate(verdict.value)
    return JudgeResult(
        judge_model=model,
        status="unscored",
        reason=verdict.reason or "judge_error",
        detail=verdict.detail,
        why=f"unscored ({verdict.reason or 'judge_error'}): {verdict.detail or ''}".rstrip(": "),
        simulated=verdict.simulated,
    )


def mean_of(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return fmean(present) if present else None
