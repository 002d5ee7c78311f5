"""Which verdict of one job is which verdict of another on the same inputs: rows pair by id and
candidate (the n-th row of an id with the n-th), units within a row by what was asked (a
question, "rating, sample 2", "a vs b, swapped order"), with each job's judges named by their
place in its panel, since the point of a drift report is that the judges differ."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from evalq.core.models import QuestionResult, RowResult

RowKey = tuple[str, str | None, int]  # id, candidate, occurrence
UnitKey = tuple[str, str, str, str, int]  # what was asked, tag, expected, judge's place, occurrence


@dataclass(frozen=True)
class JobSide:
    """One job as a drift report reads it: its rows and how it was judged."""

    job_id: str
    metric: str
    judges: Sequence[str]
    rows: Sequence[RowResult]
    simulated: bool = False
    group_by: Sequence[str] = ()
    human: object | None = None  # its JobSummary.human_agreement
    versions: Sequence[str] = ()

    def place(self, judge: str | None) -> str:
        """A judge as its place in the panel ("judge" alone for a one-judge job)."""
        if judge is None:
            return ""
        if judge not in self.judges:
            return judge
        return "judge" if len(self.judges) == 1 else f"judge {self.judges.index(judge) + 1}"


def row_key_map(rows: Sequence[RowResult]) -> dict[RowKey, RowResult]:
    seen: Counter[tuple[str, str | None]] = Counter()
    out: dict[RowKey, RowResult] = {}
    for row in sorted(rows, key=lambda r: (r.line, r.candidate or "")):
        base = (row.id, row.candidate)
        out[(*base, seen[base])] = row
        seen[base] += 1
    return out


@dataclass(frozen=True)
class RowPair:
    key: RowKey
    old: RowResult | None
    new: RowResult | None


def pair_rows(old: JobSide, new: JobSide) -> list[RowPair]:
    """Every row key of either job, in the old job's order, with each side's row (or None)."""
    a, b = row_key_map(old.rows), row_key_map(new.rows)
    keys = list(dict.fromkeys([*a, *b]))
    return [RowPair(k, a.get(k), b.get(k)) for k in keys]


def _asked(label: str, side: JobSide) -> str:
    """A unit's label with the judge's name replaced by its place: "rating by judge"."""
    for judge in sorted(side.judges, key=len, reverse=True):
        label = label.replace(judge, side.place(judge))
    return label


@dataclass
class Unit:
    label: str  # as the old job names it
    answer: str | None
    status: str


def row_units(row: RowResult | None, side: JobSide) -> dict[UnitKey, Unit]:
    """A row's units by key; a unit's answer None when it was not scored."""
    if row is None:
        return {}
    seen: Counter[tuple[str, str, str, str]] = Counter()
    out: dict[UnitKey, Unit] = {}
    for q in row.questions:
        base = (_asked(q.question, side), q.tag, q.expected, side.place(q.judge_model))
        out[(*base, seen[base])] = Unit(q.question, _answer(q), q.status)
        seen[base] += 1
    return out


def _answer(q: QuestionResult) -> str | None:
    if q.status != "ok" or q.answer is None:
        return None
    return q.answer.strip()


@dataclass
class UnitPairs:
    """The units both sides answered, as parallel lists, and those left out by why."""

    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    left_out: Counter[str] = field(default_factory=Counter)
    per_row: list[tuple[RowPair, list[tuple[str, str, str]], int]] = field(default_factory=list)


def unit_pairs(pairs: Sequence[RowPair], old: JobSide, new: JobSide) -> UnitPairs:
    """Every unit answered on both sides; per row, its changed units (label, old, new) and
    how many it had answered on both."""
    out = UnitPairs()
    for pair in pairs:
        a, b = row_units(pair.old, old), row_units(pair.new, new)
        changed: list[tuple[str, str, str]] = []
        both = 0
        for key in dict.fromkeys([*a, *b]):
            ua, ub = a.get(key), b.get(key)
            if ua is None or ub is None:
                out.left_out["asked by one job only"] += 1
                continue
            if ua.answer is None or ub.answer is None:
                why = (
                    "unscored by both"
                    if ua.answer == ub.answer
                    else (
                        "unscored by the old judge"
                        if ua.answer is None
                        else "unscored by the new judge"
                    )
                )
                out.left_out[why] += 1
                continue
            both += 1
            out.old.append(ua.answer)
            out.new.append(ub.answer)
            if ua.answer != ub.answer:
                changed.append((ua.label, ua.answer, ub.answer))
        if pair.old is not None and pair.new is not None:
            out.per_row.append((pair, changed, both))
    return out


def is_numeric(answers: Sequence[str]) -> bool:
    try:
        [float(a) for a in answers]
    except ValueError:
        return False
    return bool(answers)


def input_difference(old: dict[str, object], new: dict[str, object]) -> str | None:
    """The first field two rows' inputs differ in (None: the same inputs)."""
    for name in dict.fromkeys([*old, *new]):
        if old.get(name) != new.get(name):
            return name
    return None
