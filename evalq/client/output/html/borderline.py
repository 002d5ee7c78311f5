"""How sure each repeated verdict is, as the report shows it: per row, each verdict's samples,
certainty and an undecided marker; per job, the undecided and least certain verdicts listed
near the top, each linked to its row, so the borderline units are found without scrolling."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from evalq.core.models import Repeats, RowResult, Sample
from evalq.stats.adaptive import THRESHOLD

# A decided verdict less sure than this is borderline: the certainty at which the adaptive rule
# stops asking (a fixed count's verdict of 3 agreeing samples, at 0.94, is borderline too).
BORDERLINE_BELOW = 1.0 - THRESHOLD
# How many verdicts the borderline list shows; the rest are counted (the CSV sorts them all).
LISTED_AT_MOST = 50

State = Literal["sure", "borderline", "undecided", "unscored"]


@dataclass(frozen=True)
class RepeatLine:
    """One repeated verdict as a person reads it: what was asked, by which judge, what its
    samples said (tally and each answer), how sure it is, and whether it settled."""

    unit: str
    judge: str | None
    state: State
    tally: str  # "4 of 5 samples say yes", "split: 4 say yes, 4 say no (8 samples)"
    answers: str  # each sample's answer in order, with its order and probability if any
    certainty: float | None
    interval: tuple[float, float] | None
    rule: str | None


@dataclass(frozen=True)
class BorderlineEntry:
    """A verdict in the borderline list: its row's name and anchor (None: the row is beyond
    the rows the page shows in full)."""

    row: str
    anchor: str | None
    line: RepeatLine


@dataclass(frozen=True)
class Borderline:
    """A job's repeated verdicts at a glance: how many, how many samples, how many undecided
    and borderline, and the least sure of them (at most LISTED_AT_MOST, `more` left out)."""

    verdicts: int
    samples: int
    undecided: int
    borderline: int
    listed: tuple[BorderlineEntry, ...]
    more: int

    @property
    def headline(self) -> str:
        """ "3 verdicts undecided, 7 borderline (certainty under 0.95)"."""
        undecided = f"{self.undecided} verdict{'s' if self.undecided != 1 else ''} undecided"
        return f"{undecided}, {self.borderline} borderline (certainty under {BORDERLINE_BELOW:.2f})"


def row_anchor(index: int) -> str:
    """The HTML id of the index-th row's card: made of a number only, never of a row's id,
    which is the user's text and need not be unique."""
    return f"row-{index + 1}"


def _answer(sample: Sample) -> str:
    said = sample.answer if sample.answer is not None else "unscored"
    if sample.order:
        said += f" ({sample.order})"
    if sample.probability is not None:
        said += f" p={sample.probability:.2f}"
    return said


def state_of(r: Repeats) -> State:
    """Undecided: split at the maximum with at least one answer (a verdict with none is
    unscored, counted with the unscored units); borderline: decided, less sure than the
    rule's stop."""
    if not r.answered:
        return "unscored"
    if r.undecided:
        return "undecided"
    if r.certainty is not None and r.certainty < BORDERLINE_BELOW:
        return "borderline"
    return "sure"


def _tally(r: Repeats, state: State) -> str:
    """ "4 of 5 samples say yes", "split: 4 say 4, 4 say 5 (8 samples)"."""
    counts = Counter(s.answer for s in r.samples if s.answer is not None)
    n = len(r.samples)
    unscored = n - sum(counts.values())
    unanswered = f", {unscored} unscored" if unscored else ""
    if state == "unscored":
        return f"no answer ({n} sample{'s' if n != 1 else ''}{unanswered})"
    if state == "undecided" or r.verdict is None:
        split = ", ".join(f"{count} say {answer}" for answer, count in counts.most_common())
        return f"split: {split} ({n} samples{unanswered})"
    said = counts.get(r.verdict, 0)
    return f"{said} of {n} samples say {r.verdict}" + (
        f" ({unscored} unscored)" if unscored else ""
    )


def repeat_line(r: Repeats) -> RepeatLine:
    state = state_of(r)
    return RepeatLine(
        unit=r.unit,
        judge=r.judge_model,
        state=state,
        tally=_tally(r, state),
        answers=" · ".join(_answer(s) for s in r.samples),
        certainty=r.certainty,
        interval=r.interval,
        rule=r.rule,
    )


def repeat_lines(result: RowResult) -> tuple[RepeatLine, ...]:
    return tuple(repeat_line(r) for r in result.repeats)


def _least_sure_first(entry: BorderlineEntry) -> tuple[int, float]:
    certainty = entry.line.certainty
    return (0 if entry.line.state == "undecided" else 1, 2.0 if certainty is None else certainty)


def borderline(
    results: Sequence[RowResult], names: Mapping[int, str], shown: int
) -> Borderline | None:
    """The job's repeated verdicts over every row (`names`: each row's name by its place in
    `results`; rows from `shown` on have no card to link to); None when no verdict was
    repeated."""
    found: list[BorderlineEntry] = []
    verdicts = samples = 0
    for index, result in enumerate(results):
        for line, r in zip(repeat_lines(result), result.repeats, strict=True):
            verdicts += 1
            samples += len(r.samples)
            if line.state in ("undecided", "borderline"):
                anchor = row_anchor(index) if index < shown else None
                found.append(BorderlineEntry(names[index], anchor, line))
    if not verdicts:
        return None
    found.sort(key=_least_sure_first)  # stable: rows in their order among equals
    undecided = sum(e.line.state == "undecided" for e in found)
    return Borderline(
        verdicts=verdicts,
        samples=samples,
        undecided=undecided,
        borderline=len(found) - undecided,
        listed=tuple(found[:LISTED_AT_MOST]),
        more=max(0, len(found) - LISTED_AT_MOST),
    )
