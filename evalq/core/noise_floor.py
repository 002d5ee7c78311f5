"""A job's noise floor from its rows' repeats (RowResult.repeats): what each sample reads as
and which units are set side by side; the statistics are evalq.stats.noise's."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Sequence

from evalq.core.models import NOISE_Z, NoiseFloor, PanelNoise, Repeats, RowResult
from evalq.stats.agreement import AlphaLevel, krippendorff_alpha
from evalq.stats.noise import mean_noise_se, order_disagreement, panel_errors, split_share

RATING_LOW, RATING_HIGH = 1.0, 5.0  # the rating scale a numeric answer is read on
_SIDES = {"a": 1.0, "same": 0.5, "tie": 0.5, "b": 0.0}
_YES_NO = {"yes": 1.0, "no": 0.0}
NO_REFERENCE = (
    "a panel's error correlation needs a reference (a --human column): against the panel's "
    "own consensus, errors the judges share cancel, and the figure would say nothing"
)


def _number(answer: str) -> float | None:
    try:
        value = float(answer)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def score_value(answer: str) -> float | None:
    """A sample on the row score's scale, for the mean's judge noise: a 1-5 rating as
    (rating - 1) / 4, yes/no as 1/0, a side as 1 (A), 0.5 (SAME), 0 (B); None otherwise (a
    choice letter, a sentence label: only the spread counts, which a letter does not give)."""
    number = _number(answer)
    if number is not None:
        return (number - RATING_LOW) / (RATING_HIGH - RATING_LOW)
    word = answer.strip().lower()
    return _YES_NO.get(word, _SIDES.get(word))


def _label_value(answer: str) -> float | None:
    """A sample's answer as a number to set against a human label: a rating as itself, yes/no
    as 1/0 (what evalq.core.human.labels.row_number reads a label as)."""
    number = _number(answer)
    return number if number is not None else _YES_NO.get(answer.strip().lower())


def _answers(repeat: Repeats) -> list[str]:
    return [s.answer for s in repeat.samples if s.answer is not None]


def noise_floor(rows: Sequence[RowResult], human_column: str | None = None) -> NoiseFloor | None:
    """The job's noise floor; None when no unit of any row has two answered samples.
    ``human_column`` is the job's --human column, the reference of a panel's errors."""
    repeats = [(row, r) for row in rows for r in row.repeats]
    units = [_answers(r) for _, r in repeats]
    if not any(len(answers) >= 2 for answers in units):
        return None
    numbers = [[_number(a) for a in answers] for answers in units]
    numeric = all(v is not None for values in numbers for v in values)
    values: list[list[Hashable]] = (
        [list(v) for v in numbers] if numeric else [list(a) for a in units]
    )
    split = split_share(values)
    alpha_level: AlphaLevel = "interval" if numeric else "nominal"
    orders = order_disagreement([_by_order(r) for _, r in repeats])
    se = mean_noise_se(_score_values(rows))
    return NoiseFloor(
        units=sum(len(answers) >= 2 for answers in units),
        samples=sum(len(answers) for answers in units if len(answers) >= 2),
        undecided=sum(r.undecided for _, r in repeats),
        split_share=None if split is None else split.value,
        split_ci95=None if split is None else split.ci95,
        alpha=krippendorff_alpha(values, alpha_level),
        alpha_level=alpha_level,
        order_units=0 if orders is None else orders.n,
        order_disagreement=None if orders is None else orders.value,
        order_ci95=None if orders is None else orders.ci95,
        mean_score_noise_se=se,
        mean_score_noise_margin=None if se is None else NOISE_Z * se,
        panel=panel_noise(rows, human_column),
    )


def _by_order(repeat: Repeats) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for s in repeat.samples:
        if s.order is not None and s.answer is not None:
            out[s.order].append(s.answer)
    return out


def _score_values(rows: Sequence[RowResult]) -> list[list[list[float]]]:
    out = []
    for row in rows:
        units = [[score_value(a) for a in _answers(r)] for r in row.repeats]
        out.append([[v for v in u if v is not None] for u in units])
    return out


def panel_noise(rows: Sequence[RowResult], human_column: str | None) -> PanelNoise | None:
    """A panel's error correlation against the rows' human labels, over the rows where each
    judge answered one unit (the unit the row's label is about); None with one judge."""
    judges = list(dict.fromkeys(r.judge_model for row in rows for r in row.repeats))
    named = [j for j in judges if j is not None]
    if len(named) < 2:
        return None
    if human_column is None:
        return PanelNoise(judges=named, note=NO_REFERENCE)
    # The label readers load only for a panel with labels: `evalq status` builds a summary on
    # every call and should not pay for them otherwise.
    from evalq.core.human.labels import BadLabel, row_number

    errors: dict[str, dict[Hashable, float]] = {j: {} for j in named}
    for row in rows:
        by_judge = defaultdict(list)
        for r in row.repeats:
            by_judge[r.judge_model].append(r)
        try:
            human = row_number(row.extra.get(human_column), f"row {row.id}")
        except BadLabel:
            continue
        for judge, own in by_judge.items():
            if judge is None or len(own) != 1:
                continue
            answers = [_label_value(a) for a in _answers(own[0])]
            known = [v for v in answers if v is not None]
            if known:
                errors[judge][row.line, row.candidate] = sum(known) / len(known) - human
    figures = panel_errors(errors)
    if figures is None or figures.mean_correlation is None:
        note = "too few units with a human label that two judges both answered"
        return PanelNoise(judges=named, reference=human_column, note=note)
    return PanelNoise(
        judges=named,
        units=figures.units,
        reference=human_column,
        error_correlation=figures.mean_correlation,
        effective_judges=figures.effective_judges,
    )
