"""One row as a person reads it, per metric: the texts the judge was shown, each verdict as
words with the judge's own explanation, and (groundedness) the labelled sentences.

The report and the comparison report both render these, so a row reads the same in either.
The texts are the ones the metric says its judge read (Metric.judged_inputs), each under the
dataset's own column name (evalq.client.judged_texts.named_inputs, the exports' rule too): a
Vertex-named pairwise row shows `response` and `baseline_model_response`, a summarization row
its `instruction`, never a guess from a fixed list of names.
Everything here is plain data; the templates escape it (it comes from datasets and judges).
A rating metric stores its units as questions with no expected answer (result None even when
scored), so verdicts are read from the row's details, and only a unit whose status is not "ok"
is ever called unscored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from evalq.client.judged_texts import JudgedInput, named_inputs
from evalq.core.models import JobConfig, MediaRef, QuestionResult, RowInput, RowResult
from evalq.metrics.pairwise.sides import row_pair

Tone = Literal["ok", "bad", "unscored", "plain"]

# How long a text may be before it is folded (shown collapsed, with its length).
FOLD_CHARS = 600


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
class RowView:
    name: str  # the user's id (and the candidate column of a multi-candidate cell)
    status: str
    score: float | None
    headline: str  # the row's verdict in a few words
    tone: Tone
    texts: tuple[Text, ...] = ()
    verdicts: tuple[VerdictLine, ...] = ()
    sentence_blocks: tuple[SentenceBlock, ...] = ()
    questions: tuple[QuestionResult, ...] = ()  # Gecko's questions, with expected answers
    error: str | None = None
    simulated: bool = False
    coverage: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


TEXT_METRICS = ("pointwise", "pairwise", "rank", "groundedness")


def _str(value: Any) -> str:
    return "" if value is None else str(value)


def _texts(
    named: Sequence[JudgedInput], labels: Mapping[str, str] | None = None
) -> tuple[Text, ...]:
    """The judged texts (media apart), each under its column name, worded as `labels` (by
    field, "{column}" in it) says for some: pairwise's sides, who wrote a response."""
    return tuple(
        Text((labels or {}).get(j.field, "{column}").replace("{column}", j.column), j.value)
        for j in named
        if isinstance(j.value, str) and j.value.strip()
    )


def _judge_label(judge: str, sample: Any, samples: int) -> str:
    return f"judge {judge}" + (f", sample {int(sample) + 1}" if samples > 1 else "")


def _unscored_text(entry: Mapping[str, Any]) -> str:
    reason = entry.get("reason") or "judge_error"
    detail = entry.get("detail")
    return f"unscored ({reason})" + (f": {detail}" if detail else "")


# ---- pointwise ------------------------------------------------------------------------------


def _pointwise(
    result: RowResult, named: Sequence[JudgedInput], row: RowInput | None
) -> dict[str, Any]:
    details = result.details
    verdicts: list[VerdictLine] = []
    for judge, entry in (details.get("judges") or {}).items():
        samples = entry.get("samples") or []
        for s in samples:
            who = _judge_label(judge, s.get("sample", 0), len(samples))
            if s.get("status") == "ok" and s.get("rating") is not None:
                explanation = _str(s.get("explanation"))
                verdicts.append(
                    VerdictLine(
                        who,
                        f"rating {s['rating']}",
                        "ok",
                        (("explanation", explanation),) if explanation else (),
                    )
                )
            else:
                verdicts.append(VerdictLine(who, _unscored_text(s), "unscored"))
    mean = details.get("mean_rating")
    headline = "not rated" if mean is None else f"mean rating {mean:.2f} (1 to 5)"
    if mean is not None and details.get("stdev") is not None:
        headline += f", spread {details['stdev']:.2f}"
    return {
        "headline": headline,
        "tone": "plain" if mean is not None else "unscored",
        "texts": _texts(named),
        "verdicts": tuple(verdicts),
    }


# ---- pairwise and rank ----------------------------------------------------------------------


def _side_name(choice: Any, names: Mapping[str, str]) -> str:
    if choice in ("SAME", "tie"):
        return "tie" if choice == "tie" else "same"
    name = names.get(str(choice))
    return f"{choice} ({name})" if name else _str(choice)


def _comparison_line(
    entry: Mapping[str, Any], who: str, names: Mapping[str, str], winner: str
) -> VerdictLine:
    """One compared pair in both orders: what the judge chose each time (in the order shown)
    and the outcome once the swapped order is read back."""
    explanations = entry.get("explanations") or {}
    parts = []
    for order in ("original", "swapped"):
        choice = entry.get(order)
        if choice is None:
            continue
        words = f"{order} order: chose {choice}"
        if order == "swapped" and choice in ("A", "B"):
            meant = "B" if choice == "A" else "A"  # the responses were shown the other way round
            words = f"swapped order (shown B first): chose {choice}, which is " + _side_name(
                meant, names
            )
        parts.append((words, _str(explanations.get(order))))
    consistent = entry.get("consistent")
    verdict = winner + ("" if consistent is None else "" if consistent else " (orders disagree)")
    return VerdictLine(who, verdict, "ok" if consistent is not False else "plain", tuple(parts))


def _pairwise(
    result: RowResult, named: Sequence[JudgedInput], row: RowInput | None
) -> dict[str, Any]:
    details = result.details
    sides: Mapping[str, str] = details.get("sides") or {"A": "response_a", "B": "response_b"}
    comparisons = details.get("comparisons") or []
    verdicts = tuple(
        _comparison_line(
            c,
            _judge_label(_str(c.get("judge")), c.get("sample", 0), len(comparisons)),
            sides,
            "winner " + _side_name(c.get("outcome"), sides),
        )
        for c in comparisons
    )
    verdicts += _unscored_units(result)
    winner = details.get("winner")
    return {
        "headline": "no winner (unscored)"
        if winner is None
        else "tie"
        if winner == "tie"
        else f"winner {_side_name(winner, sides)}",
        "tone": "plain" if winner is not None else "unscored",
        # The responses as "A · COLUMN" and "B · COLUMN": the side the verdicts name, then the
        # user's column (ours, Vertex's, or a --map column).
        "texts": _texts(
            named, dict(zip(row_pair(row), ("A · {column}", "B · {column}"), strict=True))
        )
        if row is not None
        else (),
        "verdicts": verdicts,
    }


def _rank(result: RowResult, named: Sequence[JudgedInput], row: RowInput | None) -> dict[str, Any]:
    details = result.details
    comparisons = details.get("comparisons") or []
    verdicts = []
    for c in comparisons:
        a, b = _str(c.get("a")), _str(c.get("b"))
        winner = c.get("winner")
        outcome = "tie" if winner in (None, "tie") else f"{winner} wins"
        who = f"{a} (A) vs {b} (B) · " + _judge_label(_str(c.get("judge")), c.get("sample"), 1)
        verdicts.append(_comparison_line(c, who, {"A": a, "B": b}, outcome))
    verdicts += _unscored_units(result)
    points: Mapping[str, float] = details.get("points") or {}
    order = sorted(points, key=lambda name: -points[name])
    headline = (
        " > ".join(
            f"{name} ({points[name]:g} point{'' if points[name] == 1 else 's'})" for name in order
        )
        if order
        else "not ranked"
    )
    return {
        "headline": headline,
        "tone": "plain" if order else "unscored",
        "texts": _texts(named),
        "verdicts": tuple(verdicts),
    }


def _unscored_units(result: RowResult) -> tuple[VerdictLine, ...]:
    """Units with no verdict (the details list only the answered pairs)."""
    return tuple(
        VerdictLine(q.question, _unscored_text(q.model_dump()), "unscored")
        for q in result.questions
        if q.status != "ok"
    )


# ---- groundedness ---------------------------------------------------------------------------


def _grounded_block(judge: str, entry: Mapping[str, Any]) -> SentenceBlock:
    """One judge's sentence labels, marked as counted or not by the outcome they led to: an
    ineligible response is not grounded whatever its labels say, so its labels are greyed."""
    grounded = entry.get("grounded")
    why = _str(entry.get("why"))
    eligible = entry.get("eligible")
    note = None
    tone: Tone
    if entry.get("status") not in (None, "ok") or grounded is None:
        outcome, tone = f"unscored: {why or _unscored_text(entry)}", "unscored"
        note = "labels not counted: this judge is unscored for the row"
    elif eligible is False:
        reason = _str(entry.get("eligibility_reason")) or "the response does not answer"
        outcome, tone = "✗ not grounded: response not eligible", "bad"
        note = f"response not eligible: {reason.rstrip('. ')}. Its sentence labels are not counted."
    else:
        outcome = ("✓ grounded" if grounded == 1 else "✗ not grounded") + (
            f": {why}" if why else ""
        )
        tone = "ok" if grounded == 1 else "bad"
    raw = entry.get("sentences") or entry.get("response_sentences") or []
    sentences = tuple(
        Sentence(
            _str(s.get("sentence")),
            _str(s.get("label")) or "unlabelled",
            _str(s.get("rationale")),
            counted=note is None,
        )
        for s in raw
        if isinstance(s, Mapping)
    )
    return SentenceBlock(f"judge {judge}", outcome, tone, sentences, note)


def _groundedness(
    result: RowResult, named: Sequence[JudgedInput], row: RowInput | None
) -> dict[str, Any]:
    details = result.details
    blocks = tuple(
        _grounded_block(judge, entry)
        for judge, entry in (details.get("judges") or {}).items()
        if isinstance(entry, Mapping)
    )
    writer = details.get("candidate_model")
    written = details.get("response_source") == "candidate" and writer
    texts = _texts(named, {"response": f"{{column}} (written by {writer})"} if written else {})
    if result.score is None:
        headline, tone = "unscored", "unscored"
    else:
        headline = f"grounded share {result.score:.2f}" if len(blocks) > 1 else ""
        if not headline:
            headline = "✓ grounded" if result.score == 1 else "✗ not grounded"
        tone = "ok" if result.score == 1 else "bad"
    return {"headline": headline, "tone": tone, "texts": texts, "sentence_blocks": blocks}


# ---- Gecko (and any metric with expected answers) ------------------------------------------


def _gecko(result: RowResult, named: Sequence[JudgedInput], row: RowInput | None) -> dict[str, Any]:
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
    return {
        "headline": headline,
        "tone": "plain" if scored else "unscored",
        "texts": (Text(column, result.prompt),) if result.prompt else (),
        "questions": tuple(result.questions),
    }


_BY_METRIC = {
    "pointwise": _pointwise,
    "pairwise": _pairwise,
    "rank": _rank,
    "groundedness": _groundedness,
}


def row_view(
    metric: str, result: RowResult, row_input: RowInput | None, config: JobConfig | None = None
) -> RowView:
    """The row as a person reads it; `config` (the job's) names --map and --candidates
    columns as the dataset does. Never raises on odd details: a report must render whatever a
    job stored (a row from an older version, a failed row with no details)."""
    named = named_inputs(metric, row_input, result, config) if row_input is not None else []
    build = _BY_METRIC.get(metric, _gecko)
    parts = build(result, named, row_input)
    if build is not _gecko:
        parts["texts"] += tuple(
            Text(j.column, ref.value.rsplit("/", 1)[-1] if ref.kind == "path" else ref.value[:200])
            for j in named
            if isinstance(ref := j.value, MediaRef) and ref.kind != "inline"
        )
    if result.status == "failed":
        parts["tone"] = "bad"
        parts["headline"] = f"failed ({result.reason or 'error'})"
    name = result.id + (f" · {result.candidate}" if result.candidate else "")
    return RowView(
        name=name,
        status=result.status,
        score=result.score,
        error=result.error,
        simulated=result.simulated,
        coverage=result.coverage,
        extra=dict(result.extra),
        **parts,
    )


def input_for(
    inputs: Mapping[Any, RowInput], result: RowResult, fallback: RowInput | None = None
) -> RowInput | None:
    """A result's stored input: by (id, candidate) when the inputs hold every cell of a
    multi-candidate job, else by id (one candidate's cells, or a one-candidate job)."""
    found = inputs.get((result.id, result.candidate)) if result.candidate else None
    if found is None:
        found = inputs.get(result.id)
    if found is not None and result.candidate and found.candidate not in (None, result.candidate):
        return fallback  # another candidate's cell: its texts are not this row's
    return found or fallback
