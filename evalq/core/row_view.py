"""One row as a person reads it: the parts each metric builds (Metric.view) and the pieces they
share, so a row reads the same in the report and the comparison report. Plain data; the
templates escape it, as it comes from datasets and judges."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from evalq.core.models import MediaRef, QuestionResult, RowResult

Tone = Literal["ok", "bad", "unscored", "plain"]

# How long a text may be before it is folded (shown collapsed, with its length).
FOLD_CHARS = 600


@dataclass(frozen=True)
class JudgedInput:
    """One thing the judge was shown of a row: the metric's field (what the view decorates,
    e.g. pairwise's side A), the dataset's column it came from (what the user sees it as), and
    its text or media."""

    field: str
    column: str
    value: str | MediaRef


@dataclass(frozen=True)
class Text:
    """A text the judge was shown: a query, a context, a response, a candidate's answer."""

    label: str
    text: str

    @property
    def folded(self) -> bool:
        return len(self.text) > FOLD_CHARS


@dataclass(frozen=True)
class VerdictLine:
    """One judge call's verdict (a rating, a choice, a label set), who gave it, and why."""

    who: str
    verdict: str
    tone: Tone = "plain"
    explanations: tuple[tuple[str, str], ...] = ()  # (which call, the judge's words)


@dataclass(frozen=True)
class Sentence:
    text: str
    label: str
    rationale: str = ""
    counted: bool = True  # False: the row's outcome did not use this label (ineligible)


@dataclass(frozen=True)
class SentenceBlock:
    """One judge's labels on the response's sentences, with what they added up to."""

    judge: str
    outcome: str
    tone: Tone
    sentences: tuple[Sentence, ...]
    note: str | None = None  # why the labels are not counted, when they are not


@dataclass(frozen=True)
class ViewParts:
    """What a metric says of one row (Metric.view)."""

    headline: str  # the row's verdict in a few words
    tone: Tone
    texts: tuple[Text, ...] = ()
    verdicts: tuple[VerdictLine, ...] = ()
    sentence_blocks: tuple[SentenceBlock, ...] = ()
    questions: tuple[QuestionResult, ...] = ()  # Gecko's questions, with expected answers


@dataclass(frozen=True)
class RowView:
    name: str  # the user's id (and the candidate column of a multi-candidate cell)
    status: str
    score: float | None
    headline: str
    tone: Tone
    texts: tuple[Text, ...] = ()
    verdicts: tuple[VerdictLine, ...] = ()
    sentence_blocks: tuple[SentenceBlock, ...] = ()
    questions: tuple[QuestionResult, ...] = ()
    error: str | None = None
    simulated: bool = False
    coverage: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def shown(value: Any) -> str:
    return "" if value is None else str(value)


def texts_of(
    named: Sequence[JudgedInput], labels: Mapping[str, str] | None = None
) -> tuple[Text, ...]:
    """The judged texts (media apart), each under its column name, worded as `labels` (by
    field, "{column}" in it) says for some: pairwise's sides, who wrote a response."""
    return tuple(
        Text((labels or {}).get(j.field, "{column}").replace("{column}", j.column), j.value)
        for j in named
        if isinstance(j.value, str) and j.value.strip()
    )


def judge_label(judge: str, sample: Any, samples: int) -> str:
    return f"judge {judge}" + (f", sample {int(sample) + 1}" if samples > 1 else "")


def unscored_text(entry: Mapping[str, Any]) -> str:
    reason = entry.get("reason") or "judge_error"
    detail = entry.get("detail")
    return f"unscored ({reason})" + (f": {detail}" if detail else "")


def unscored_units(result: RowResult) -> tuple[VerdictLine, ...]:
    """Units with no verdict (a metric whose details list only the answered ones). A rating
    metric's units are questions with no expected answer (result None even when scored), so
    only a unit whose status is not "ok" is ever called unscored."""
    return tuple(
        VerdictLine(q.question, unscored_text(q.model_dump()), "unscored")
        for q in result.questions
        if q.status != "ok"
    )


def questions_view(result: RowResult, named: Sequence[JudgedInput]) -> ViewParts:
    """A row judged on questions with expected answers (Gecko's), and the view of a row whose
    metric this evalq does not have: every result keeps its prompt and questions."""
    # The prompt as the result keeps it (a row refused at load has no stored input), under
    # the column it was read from (a --map column) when the input says.
    column = next((j.column for j in named if j.field == "prompt"), "prompt")
    scored = [q for q in result.questions if q.result is not None]
    right = sum(q.result or 0 for q in scored)
    headline = (
        f"{right} of {len(scored)} questions answered as expected"
        if scored
        else "no question scored"
    )
    return ViewParts(
        headline=headline,
        tone="plain" if scored else "unscored",
        texts=(Text(column, result.prompt),) if result.prompt else (),
        questions=tuple(result.questions),
    )
