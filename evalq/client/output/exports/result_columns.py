"""Each metric's own columns for results read as a table (Job.results(), `evalq results --format
csv`), so a user sorts by rating or filters on the winner instead of digging into `details`. A
value the judge did not give stays empty, never 0: an unscored row must not read as the worst."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalq.core.models import Repeats, RowResult

EXTRA_PREFIX = "extra:"


def _first_text(values: Sequence[Any]) -> str | None:
    return next((str(v) for v in values if isinstance(v, str) and v.strip()), None)


def _pointwise(details: Mapping[str, Any]) -> dict[str, Any]:
    """The mean rating (1-5) and the first judge's first explanation; with several judges each
    judge's own mean rating and explanation too."""
    judges: Mapping[str, Any] = details.get("judges") or {}

    def explanation(entry: Mapping[str, Any]) -> str | None:
        return _first_text([s.get("explanation") for s in entry.get("samples", [])])

    entries = list(judges.values())
    out: dict[str, Any] = {
        "rating": details.get("mean_rating"),
        "explanation": explanation(entries[0]) if entries else None,
    }
    if len(judges) > 1:
        for judge, entry in judges.items():
            out[f"rating:{judge}"] = entry.get("mean_rating")
            out[f"explanation:{judge}"] = explanation(entry)
    return out


def _pairwise(details: Mapping[str, Any]) -> dict[str, Any]:
    """The winner (A, B or tie) and what it stands for, and the first judged explanation."""
    winner = details.get("winner")
    sides: Mapping[str, str] = details.get("sides") or {}
    explanations = [
        text
        for entry in details.get("comparisons", [])
        for text in (entry.get("explanations") or {}).values()
    ]
    return {
        "winner": winner,
        "winner_is": sides.get(winner, winner) if winner is not None else None,
        "explanation": _first_text(explanations),
    }


def _labels(judge: Mapping[str, Any]) -> str | None:
    """Sentence labels in one cell: `[1] supported: First sentence. | [2] no_rad: ...`."""
    sentences = judge.get("response_sentences") or []
    if not sentences:
        return None
    parts = []
    for s in sentences:
        text = " ".join(str(s.get("sentence", "")).split())
        parts.append(f"[{s.get('index', 0) + 1}] {s.get('label') or 'unlabelled'}: {text}")
    return " | ".join(parts)


def _groundedness(details: Mapping[str, Any]) -> dict[str, Any]:
    """The response judged, grounded (the judges' mean, 1 or 0 with one judge), whether the
    response addresses the query, and the first judge's labels per sentence."""
    judges = list((details.get("judges") or {}).values())
    eligible = [j.get("eligible") for j in judges if j.get("eligible") is not None]
    labelled = next((j for j in judges if j.get("response_sentences")), None)
    return {
        "response": details.get("response"),
        "grounded": (details.get("mean") or {}).get("grounded"),
        "eligible": all(eligible) if eligible else None,
        "labels": _labels(labelled) if labelled is not None else None,
        "explanation": _first_text([j.get("why") for j in judges]),
    }


def _rank(details: Mapping[str, Any]) -> dict[str, Any]:
    """The row's order of candidates by points won (ties share a place) and its winner."""
    points: Mapping[str, float] = details.get("points") or {}
    if not points or not details.get("comparisons"):
        return {"order": None, "winner": None}
    ranked = sorted(points.items(), key=lambda kv: -kv[1])
    top = [name for name, value in ranked if value == ranked[0][1]]
    order = " > ".join(f"{name} ({value:g})" for name, value in ranked)
    return {"order": order, "winner": top[0] if len(top) == 1 else "tie: " + ", ".join(top)}


def metric_cells(row: RowResult) -> dict[str, Any]:
    """The row's metric columns (none for Gecko, whose questions are columns of their own),
    then how sure its repeated verdicts are."""
    d = row.details
    if "mean_rating" in d:
        cells = _pointwise(d)
    elif "sides" in d:
        cells = _pairwise(d)
    elif "response_source" in d:
        cells = _groundedness(d)
    elif "points" in d:
        cells = _rank(d)
    else:
        cells = {}
    return cells | repeat_cells(row)


def repeat_cells(row: RowResult) -> dict[str, Any]:
    """With repeated samples (--samples K or auto): the samples the row's verdicts took, how
    many are undecided (split votes), the least certainty among them, and each verdict in one
    cell (`rating by j: 4 4 4 -> 4 (0.96)`), so the borderline rows sort to the top."""
    if not row.repeats:
        return {}
    certainties = [r.certainty for r in row.repeats if r.certainty is not None]

    def said(r: Repeats) -> str:
        answers = " ".join(s.answer or "-" for s in r.samples)
        if not r.answered:
            verdict = "unscored"
        else:
            verdict = r.verdict if r.decided and r.verdict is not None else "undecided"
        sure = f" ({r.certainty:.2f})" if r.certainty is not None else ""
        who = f" by {r.judge_model}" if r.judge_model else ""
        return f"{r.unit}{who}: {answers} -> {verdict}{sure}"

    return {
        "samples": sum(len(r.samples) for r in row.repeats),
        "undecided": sum(r.undecided for r in row.repeats),
        "certainty": min(certainties) if certainties else None,
        "repeats": " | ".join(said(r) for r in row.repeats),
    }


def metric_table(rows: Sequence[RowResult]) -> tuple[list[str], list[dict[str, Any]]]:
    """Every row's metric cells, and the columns in the order first met (a row without a
    column's value leaves it empty)."""
    cells = [metric_cells(r) for r in rows]
    names = list(dict.fromkeys(name for c in cells for name in c))
    return names, cells


def extra_names(rows: Sequence[RowResult], taken: Sequence[str]) -> dict[str, str]:
    """Each extra column's name in the table: the user's own, or `extra:NAME` only where it
    would clash with one of evalq's columns."""
    used = set(taken)
    out: dict[str, str] = {}
    for name in dict.fromkeys(k for r in rows for k in r.extra):
        out[name] = f"{EXTRA_PREFIX}{name}" if name in used else name
    return out
