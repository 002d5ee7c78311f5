"""The groundedness job figures: per-judge means, label totals, where responses came from, and
agreement between judges.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from evalq.core.models import (
    RowResult,
)
from evalq.metrics.groundedness.parsing import (
    LABELS,
)
from evalq.metrics.groundedness.scoring import JudgeResult, mean_of
from evalq.stats.agreement import label_agreement


def _row_judges(row: RowResult) -> dict[str, JudgeResult]:
    raw = row.details.get("judges")
    if not isinstance(raw, dict):
        return {}
    return {str(model): JudgeResult.model_validate(value) for model, value in raw.items()}


def summarize_rows(rows: list[RowResult]) -> dict[str, Any]:
    """Per-judge means, label totals, where responses came from, and agreement between judges."""
    judged = [(row, _row_judges(row)) for row in rows]
    judged = [(row, judges) for row, judges in judged if judges]
    models = list(dict.fromkeys(model for _, judges in judged for model in judges))
    per_judge: dict[str, Any] = {}
    labels: Counter[str] = Counter()
    rejected = asked_again = conflicting = 0
    for model in models:
        results = [judges[model] for _, judges in judged if model in judges]
        ok = [r for r in results if r.status == "ok"]
        for r in ok:
            labels.update({k: v for k, v in r.counts.items() if v})
            rejected += r.excerpts_rejected
            conflicting += len(r.conflicting_labels)
        asked_again += sum(1 for r in results if r.asked_again)
        per_judge[model] = {
            "grounded": mean_of(r.grounded for r in ok),
            "supported_fraction": mean_of(r.supported_fraction for r in ok),
            "rows_scored": len(ok),
            "rows_unscored": len(results) - len(ok),
            "ineligible": sum(1 for r in ok if r.eligible is False),
        }
    sources = Counter(str(row.details.get("response_source")) for row, _ in judged)
    summary: dict[str, Any] = {
        "per_judge": per_judge,
        "labels": {label: labels[label] for label in LABELS},
        "excerpts_rejected": rejected,
        "labels_asked_again": asked_again,  # judge verdicts that needed the re-ask
        "conflicting_labels": conflicting,  # sentences whose labels differed (scored verdicts)
        "responses": {"given": sources["dataset"], "generated": sources["candidate"]},
    }
    if len(models) >= 2:
        summary["agreement"] = label_agreement(
            {
                m: {i: _sure(j[m].grounded) for i, (_, j) in enumerate(judged) if m in j}
                for m in models
            }
        )
    return summary


def _sure(grounded: float | None) -> int | None:
    """A judge's grounded 0/1; a split vote of repeated samples is no label to agree on."""
    return int(grounded) if grounded in (0, 1) else None
