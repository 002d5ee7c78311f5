"""Judge setups ranked by agreement with human labels, with paired differences and the best per
unit of cost. Pure: it reads results already fetched (evalq.client.calibrate runs the jobs), so
the CLI, the API and the HTML page show the same figures."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from evalq.core.groups import NO_VALUE, shared_with
from evalq.core.human.estimate import Estimate
from evalq.core.human.paired_bootstrap import paired_difference_test
from evalq.core.human.pairwise_accuracy import pairwise_accuracy
from evalq.core.human.rank_correlation import kendall, spearman, spearman_value
from evalq.core.models import JobSummary, RowResult
from evalq.stats.multiple import holm

SEED = 15
RESAMPLES = 2000
ALPHA = 0.05
YES_NO = {"yes": 1.0, "no": 0.0}

NO_LABEL = "no label"
BAD_LABEL = "label not a number or yes/no"
UNSCORED = "not scored by the judge"
NO_GROUP = "no group value (left out of pairwise accuracy only)"


def read_label(value: Any) -> tuple[float | None, str | None]:
    """A rater's label as a number, or why it cannot be one. Numbers and numeric text (a CSV
    holds text) count as given; yes/no as 1/0; booleans as yes/no. A row without one, like a
    row the setup did not score, is left out, counted by reason and named, never scored 0 or 1."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, NO_LABEL
    if isinstance(value, bool):
        return float(value), None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip().lower()
        if text in YES_NO:
            return YES_NO[text], None
        try:
            number = float(text)
        except ValueError:
            return None, BAD_LABEL
    else:
        return None, BAD_LABEL
    return (number, None) if math.isfinite(number) else (None, BAD_LABEL)


@dataclass(frozen=True)
class SetupRows:
    """One setup's job as read back: its name, summary and rows."""

    name: str
    summary: JobSummary
    rows: Sequence[RowResult]


@dataclass(frozen=True)
class SetupAgreement:
    """One setup's agreement with the rater, over the rows it scored that have a label."""

    name: str
    job_id: str
    rows: int  # the job's rows
    used: int  # rows with a label and a score
    left_out: dict[str, int]  # reason -> rows
    left_out_ids: dict[str, list[str]]  # reason -> the rows' ids
    spearman: Estimate
    kendall: Estimate
    pairwise: Estimate
    cost_usd: float | None  # the whole job's, None when not priced (never 0)
    cost_per_row_usd: float | None
    simulated: bool  # a simulated judge: the cost is an estimate, nothing was billed
    cost_note: str | None = None

    @property
    def cost_kind(self) -> str:
        if self.cost_per_row_usd is None:
            return "unknown"
        return "estimate" if self.simulated else "priced"


@dataclass(frozen=True)
class SetupDifference:
    """Spearman of setup A minus setup B on the rows both scored, bootstrap over rows."""

    a: str
    b: str
    difference: Estimate
    p_value: float | None
    p_holm: float | None = None

    @property
    def significant(self) -> bool:
        return self.p_holm is not None and self.p_holm < ALPHA


@dataclass(frozen=True)
class Calibration:
    human: str
    group_by: str | None
    setups: list[SetupAgreement]
    differences: list[SetupDifference]
    most_agreeing: str | None
    best_per_cost: str | None
    best_per_cost_why: str
    simulated: bool
    seed: int = SEED
    resamples: int = RESAMPLES
    metrics: list[str] = field(default_factory=list)


BEST_PER_COST_RULE = (
    "the cheapest setup per row whose Spearman is not significantly below the most "
    f"agreeing setup's (Holm-adjusted p >= {ALPHA} on their paired difference)"
)


def _group(row: RowResult, group_by: str | None) -> str | None:
    """The rows a row is paired with share this (evalq.core.groups.shared_with), so every
    setup pairs the same rows; None for a row without it (left out of pairwise accuracy)."""
    shared = shared_with(row, group_by)
    return None if shared == NO_VALUE else shared


@dataclass(frozen=True)
class _Usable:
    """A setup's rows that count: id -> (score, label, group)."""

    points: dict[str, tuple[float, float, str | None]]
    left_out_ids: dict[str, list[str]]


def _usable(setup: SetupRows, human: str, group_by: str | None) -> _Usable:
    points: dict[str, tuple[float, float, str | None]] = {}
    left: dict[str, list[str]] = {}
    for row in setup.rows:
        label, why = read_label(row.extra.get(human))
        if why is None and row.score is None:
            why = UNSCORED
        if why is not None or label is None or row.score is None:
            left.setdefault(why or UNSCORED, []).append(row.id)
            continue
        group = _group(row, group_by)
        if group is None:
            left.setdefault(NO_GROUP, []).append(row.id)
        points[row.id] = (row.score, label, group)
    return _Usable(points, left)


def _agreement(setup: SetupRows, usable: _Usable, seed: int, resamples: int) -> SetupAgreement:
    values = list(usable.points.values())
    scores = [v[0] for v in values]
    labels = [v[1] for v in values]
    grouped = [v for v in values if v[2] is not None]
    summary = setup.summary
    per_row = (
        summary.cost_usd / summary.rows_done
        if summary.cost_usd is not None and summary.rows_done
        else None
    )
    return SetupAgreement(
        name=setup.name,
        job_id=summary.job_id,
        rows=len(setup.rows),
        used=len(values),
        left_out={k: len(v) for k, v in usable.left_out_ids.items()},
        left_out_ids=usable.left_out_ids,
        spearman=spearman(scores, labels, seed=seed, resamples=resamples),
        kendall=kendall(scores, labels, seed=seed, resamples=resamples),
        pairwise=pairwise_accuracy(
            [v[0] for v in grouped],
            [v[1] for v in grouped],
            [str(v[2]) for v in grouped],
            seed=seed,
            resamples=resamples,
        ),
        cost_usd=summary.cost_usd,
        cost_per_row_usd=per_row,
        simulated=summary.simulated,
        cost_note=summary.cost_note,
    )


def _difference(
    a: _Usable, b: _Usable, names: tuple[str, str], seed: int, resamples: int
) -> SetupDifference:
    shared = [i for i in a.points if i in b.points]
    score_a = [a.points[i][0] for i in shared]
    score_b = [b.points[i][0] for i in shared]
    labels = [a.points[i][1] for i in shared]

    def stat(indexes: list[int]) -> float | None:
        human = [labels[i] for i in indexes]
        rho_a = spearman_value([score_a[i] for i in indexes], human)
        rho_b = spearman_value([score_b[i] for i in indexes], human)
        return None if rho_a is None or rho_b is None else rho_a - rho_b

    test = paired_difference_test(stat, len(shared), seed=seed, resamples=resamples)
    return SetupDifference(names[0], names[1], test.estimate, test.p_value)


def _best_per_cost(
    setups: Sequence[SetupAgreement], differences: Sequence[SetupDifference]
) -> tuple[str | None, str | None, str]:
    """The most agreeing setup, and the best per unit of cost (BEST_PER_COST_RULE), with
    why in words."""
    rated = [s for s in setups if s.spearman.value is not None]
    if not rated:
        return None, None, "no setup has a Spearman value (see the notes): cannot say"
    top = max(rated, key=lambda s: s.spearman.value or 0.0)
    behind = {
        (d.b if d.a == top.name else d.a)
        for d in differences
        if top.name in (d.a, d.b) and d.significant
    }
    close = [s for s in rated if s.name not in behind]
    priced = [s for s in close if s.cost_per_row_usd is not None]
    unknown = [s.name for s in close if s.cost_per_row_usd is None]
    if not priced:
        return top.name, None, f"cost unknown for {', '.join(unknown)}: cannot say"
    best = min(priced, key=lambda s: s.cost_per_row_usd or 0.0)
    why = BEST_PER_COST_RULE
    if unknown:
        why += f"; left out, cost unknown: {', '.join(unknown)}"
    return top.name, best.name, why


def calibration(
    setups: Sequence[SetupRows],
    human: str,
    *,
    group_by: str | None = None,
    seed: int = SEED,
    resamples: int = RESAMPLES,
) -> Calibration:
    """Every setup's agreement with the labels in column ``human`` (Spearman, Kendall tau-b,
    the Gecko paper's pairwise accuracy, each with a bootstrap interval), the paired differences
    of every two setups (in the order given: A is the earlier one) with Holm's correction, and
    the best ones."""
    usable = {s.name: _usable(s, human, group_by) for s in setups}
    agreements = [_agreement(s, usable[s.name], seed, resamples) for s in setups]
    raw = [
        _difference(usable[a.name], usable[b.name], (a.name, b.name), seed, resamples)
        for a, b in combinations(setups, 2)
    ]
    adjusted = holm([d.p_value for d in raw])
    differences = [
        SetupDifference(d.a, d.b, d.difference, d.p_value, p)
        for d, p in zip(raw, adjusted, strict=True)
    ]
    top, best, why = _best_per_cost(agreements, differences)
    return Calibration(
        human=human,
        group_by=group_by,
        setups=agreements,
        differences=differences,
        most_agreeing=top,
        best_per_cost=best,
        best_per_cost_why=why,
        simulated=any(s.summary.simulated for s in setups),
        seed=seed,
        resamples=resamples,
        metrics=list(dict.fromkeys(s.summary.metric for s in setups)),
    )


def estimate_dict(estimate: Estimate) -> dict[str, Any]:
    return {
        "value": estimate.value,
        "ci95": list(estimate.ci95) if estimate.ci95 is not None else None,
        "n": estimate.n,
        "method": estimate.method,
        "note": estimate.note,
    }


def calibration_dict(result: Calibration) -> dict[str, Any]:
    """The whole calibration as JSON-ready data (`evalq calibrate --json`)."""
    return {
        "human": result.human,
        "group_by": result.group_by,
        "metrics": result.metrics,
        "simulated": result.simulated,
        "seed": result.seed,
        "resamples": result.resamples,
        "setups": [
            {
                "name": s.name,
                "job_id": s.job_id,
                "rows": s.rows,
                "rows_used": s.used,
                "rows_left_out": s.left_out,
                "rows_left_out_ids": s.left_out_ids,
                "spearman": estimate_dict(s.spearman),
                "kendall": estimate_dict(s.kendall),
                "pairwise_accuracy": estimate_dict(s.pairwise),
                "cost_usd": s.cost_usd,
                "cost_per_row_usd": s.cost_per_row_usd,
                "cost_kind": s.cost_kind,
                "cost_note": s.cost_note,
            }
            for s in result.setups
        ],
        "differences": [
            {
                "a": d.a,
                "b": d.b,
                "spearman_difference": estimate_dict(d.difference),
                "p_value": d.p_value,
                "p_holm": d.p_holm,
                "significant": d.significant,
            }
            for d in result.differences
        ],
        "most_agreeing": result.most_agreeing,
        "best_per_cost": result.best_per_cost,
        "best_per_cost_rule": result.best_per_cost_why,
    }


def counts_text(left_out: Mapping[str, int]) -> str:
    return "; ".join(f"{n} {why}" for why, n in left_out.items()) or "none"
