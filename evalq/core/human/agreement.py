"""How well the judge agrees with the dataset's human labels, at each level the metric judges
(JobSummary.human_agreement). Pure: row results in, HumanAgreement out."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalq.core.groups import group_value, shared_with
from evalq.core.human.label_stats import cohen_kappa, label_accuracy
from evalq.core.human.labels import (
    PREFERENCES,
    SENTENCE_LABELS,
    SENTENCE_LABELS_COLUMN,
    BadLabel,
    LabelSources,
    label_sources,
    metric_labels,
    preference,
    rating_label,
    row_number,
)
from evalq.core.human.pairwise_accuracy import pairwise_accuracy
from evalq.core.human.rank_correlation import kendall, spearman
from evalq.core.human.sentences import sentence_pairs
from evalq.core.models import (
    AgreementFigures,
    AgreementStat,
    HumanAgreement,
    HumanLevelAgreement,
    JobConfig,
    RowResult,
)

EXAMPLES_SHOWN = 10  # left-out labels named in the summary, the rest counted
MIN_SLICE_LABELS = 10  # a tag or group gets its own figures from this many labels
RATING_SCALE = (1, 5)  # what HumanLabels.row == "rating" reads


@dataclass
class Pair:
    """One label compared: the judge's value and the rater's, with where it came from."""

    judge: Any
    human: Any
    row: RowResult
    tag: str | None = None


@dataclass
class Labels:
    """A level's compared labels and its left-out ones (reason, message)."""

    pairs: list[Pair] = field(default_factory=list)
    left_out: list[tuple[str, str]] = field(default_factory=list)

    def skip(self, reason: str, message: str) -> None:
        self.left_out.append((reason, message))


def _stat(estimate: Any) -> AgreementStat:
    return AgreementStat(
        value=estimate.value,
        ci95=None if estimate.ci95 is None else tuple(estimate.ci95),
        n=estimate.n,
        method=estimate.method,
        note=estimate.note,
    )


def _where(row: RowResult) -> str:
    return f"row {row.id}"


# ---- the row level: a number per row -----------------------------------------------------


def row_labels(rows: Sequence[RowResult], column: str, ordinal: bool) -> Labels:
    out = Labels()
    for row in rows:
        where = _where(row)
        try:
            value = row.extra.get(column)
            human: float = (
                rating_label(value, where, *RATING_SCALE) if ordinal else row_number(value, where)
            )
        except BadLabel as bad:
            out.skip(bad.reason, bad.message)
            continue
        if row.score is None:
            out.skip("row_unscored", f"{where}: the row has no score ({row.reason or 'failed'})")
            continue
        judge = row.details.get("mean_rating") if ordinal else row.score
        if judge is None:
            out.skip("row_unscored", f"{where}: the row has no rating")
            continue
        out.pairs.append(Pair(judge=judge, human=human, row=row))
    return out


def _rounded(rating: float) -> int:
    return int(rating + 0.5)  # half up: a 3.5 mean rating reads as 4


def row_figures(
    pairs: Sequence[Pair], scope: str, ordinal: bool, by: Callable[[RowResult], str]
) -> AgreementFigures:
    judge = [float(p.judge) for p in pairs]
    human = [float(p.human) for p in pairs]
    figures = AgreementFigures(
        scope=scope,
        labels=len(pairs),
        spearman=_stat(spearman(judge, human)),
        kendall=_stat(kendall(judge, human)),
        pairwise_accuracy=_stat(pairwise_accuracy(judge, human, [by(p.row) for p in pairs])),
    )
    binary = all(v in (0.0, 1.0) for v in judge + human)
    if ordinal or binary:
        j = [str(_rounded(v)) if ordinal else str(int(v)) for v in judge]
        h = [str(int(v)) for v in human]
        low, high = RATING_SCALE if ordinal else (0, 1)
        categories = [str(n) for n in range(low, high + 1)]
        figures.accuracy = _stat(label_accuracy(j, h))
        figures.kappa = _stat(
            cohen_kappa(j, h, categories=categories, weights="quadratic" if ordinal else None)
        )
    return figures


# ---- labels: preferences and questions ---------------------------------------------------


def preference_labels(rows: Sequence[RowResult], column: str) -> Labels:
    out = Labels()
    for row in rows:
        try:
            human = preference(row.extra.get(column), _where(row))
        except BadLabel as bad:
            out.skip(bad.reason, bad.message)
            continue
        winner = row.details.get("winner")
        if winner is None:
            out.skip("row_unscored", f"{_where(row)}: the judges decided no winner")
            continue
        out.pairs.append(Pair(judge=winner, human=human, row=row))
    return out


def question_labels(rows: Sequence[RowResult]) -> Labels:
    out = Labels()
    for row in rows:
        named: set[str] = set()  # a question asked of several judges is named once
        for q in row.questions:
            where = f"{_where(row)} question {q.question!r}"
            if q.human_error is not None:
                if q.human_error not in named:
                    named.add(q.human_error)
                    out.skip("unknown_label", f"{_where(row)} {q.human_error}")
            elif q.human is None:
                if q.source == "dataset" and where not in named:
                    named.add(where)
                    out.skip("missing", f"{where}: no human answer")
            elif q.answer is None or q.status != "ok":
                out.skip("unscored", f"{where}: the validator's answer is unscored ({q.reason})")
            else:
                out.pairs.append(Pair(judge=q.answer, human=q.human, row=row, tag=q.tag))
    return out


def label_figures(
    pairs: Sequence[Pair], scope: str, categories: Sequence[str] | None
) -> AgreementFigures:
    judge = [str(p.judge) for p in pairs]
    human = [str(p.human) for p in pairs]
    return AgreementFigures(
        scope=scope,
        labels=len(pairs),
        accuracy=_stat(label_accuracy(judge, human)),
        kappa=_stat(cohen_kappa(judge, human, categories=categories)),
    )


# ---- slices and levels ---------------------------------------------------------------------


def _slices(pairs: Sequence[Pair], key: Callable[[Pair], str | None]) -> dict[str, list[Pair]]:
    out: dict[str, list[Pair]] = {}
    for p in pairs:
        value = key(p)
        if value is not None:
            out.setdefault(value, []).append(p)
    return {k: v for k, v in out.items() if len(v) >= MIN_SLICE_LABELS}


def _group_of(column: str) -> Callable[[Pair], str | None]:
    def value(p: Pair) -> str | None:
        return group_value(p.row.extra.get(column))

    return value


def _level(
    level: Any,
    source: str,
    judge_value: str,
    labels: Labels,
    figures: Callable[[Sequence[Pair], str], AgreementFigures],
    group_by: Sequence[str],
    **fields: Any,
) -> HumanLevelAgreement:
    reasons = Counter(reason for reason, _ in labels.left_out)
    by_tag = [
        figures(members, f"tag {tag}")
        for tag, members in sorted(_slices(labels.pairs, lambda p: p.tag).items())
    ]
    by_group = [
        figures(members, f"group {column}={value}")
        for column in dict.fromkeys(group_by)
        for value, members in _slices(labels.pairs, _group_of(column)).items()
    ]
    return HumanLevelAgreement(
        level=level,
        source=source,
        judge_value=judge_value,
        labels_used=len(labels.pairs),
        labels_left_out=len(labels.left_out),
        left_out_by_reason=dict(reasons),
        left_out_examples=[message for _, message in labels.left_out[:EXAMPLES_SHOWN]],
        overall=figures(labels.pairs, "all"),
        by_tag=by_tag,
        by_group=by_group,
        **fields,
    )


def human_agreement(
    rows: Sequence[RowResult], config: JobConfig, sources: LabelSources | None = None
) -> HumanAgreement | None:
    """The job's agreement with its human labels, or None when the dataset has none.
    `sources`: where the labels are, when the caller has already looked (label_sources).
    Levels: row (the score against --human: Spearman, Kendall tau-b, pairwise accuracy over
    rows sharing a prompt or the first --group-by value as the Gecko paper ranks metrics; for
    pointwise also accuracy and quadratic kappa of the rounded rating), preference (pairwise
    winner), question (Gecko's validator answers), sentence (groundedness labels). Every label
    left out (missing, unreadable, unscored, not in evalq's split) is counted by reason and
    the first few named."""
    if sources is None:
        sources = label_sources(rows, config)
    if not sources:
        return None
    column, has_questions, has_sentences = sources.column, sources.questions, sources.sentences
    if any(r.candidate is not None for r in rows):
        return HumanAgreement(
            note="a multi-candidate job's human labels are one per dataset row, not one per "
            "candidate: not compared (run one job per candidate to measure agreement)"
        )
    pairs_by = config.group_by[0] if config.group_by else None

    def by(row: RowResult) -> str:
        return shared_with(row, pairs_by)

    group_by = list(config.group_by)
    levels: list[HumanLevelAgreement] = []
    reads = metric_labels(config.metric).row
    if column is not None and reads == "preference":
        levels.append(
            _level(
                "preference",
                f"column {column}",
                "the judges' winner (A, B or tie)",
                preference_labels(rows, column),
                lambda ps, scope: label_figures(ps, scope, PREFERENCES),
                group_by,
            )
        )
    elif column is not None:
        ordinal = reads == "rating"
        levels.append(
            _level(
                "row",
                f"column {column}",
                "the mean rating (1-5)" if ordinal else "the row score",
                row_labels(rows, column, ordinal),
                lambda ps, scope: row_figures(ps, scope, ordinal, by),
                group_by,
                kappa_weights="quadratic" if ordinal else None,
                pairs_grouped_by=f"column {pairs_by}" if pairs_by else "prompt",
            )
        )
    if has_questions:
        levels.append(
            _level(
                "question",
                "questions[].human",
                "the validator's answer",
                question_labels(rows),
                lambda ps, scope: label_figures(ps, scope, None),
                group_by,
            )
        )
    if has_sentences:
        labels = Labels()
        for row in rows:
            pairs, left_out = sentence_pairs(row)
            labels.pairs += [Pair(judge=j, human=h, row=row) for j, h in pairs]
            labels.left_out += left_out
        levels.append(
            _level(
                "sentence",
                SENTENCE_LABELS_COLUMN,
                "the label that counts, from the first judge that labelled the response",
                labels,
                lambda ps, scope: label_figures(ps, scope, SENTENCE_LABELS),
                group_by,
            )
        )
    levels = [lv for lv in levels if lv.labels_used or lv.labels_left_out]
    return HumanAgreement(levels=levels) if levels else None
