"""`--fail-under X`: the threshold a CI run holds a finished job to, one X for every figure it
checks, so a pipeline reads one number. A figure with no scored rows fails too: "nothing was
measured" is no pass."""

from __future__ import annotations

from evalq.core.models import JobSummary


def _figures(summary: JobSummary) -> list[tuple[str, float | None]]:
    """What is held to the threshold, each with the words that name it: each candidate's mean
    rather than a pooled one, which would hide the weak model, and each group's."""
    if summary.candidates:
        figures = [(f"candidate {n}", c.mean_score) for n, c in summary.candidates.items()]
    else:
        figures = [("job mean", summary.mean_score)]
    for g in summary.groups:
        within = f" (candidate {g.candidate})" if g.candidate is not None else ""
        figures.append((f"group {g.column}={g.value}{within}", g.mean_score))
    return figures


def under(summary: JobSummary, threshold: float) -> list[str]:
    """One line per figure under `threshold` (or with no scored rows); empty: it passes."""
    lines = []
    for label, mean in _figures(summary):
        if mean is None:
            lines.append(f"{label}: no scored rows (fail-under {threshold:g})")
        elif mean < threshold:
            lines.append(f"{label}: mean {mean:.3f} is under {threshold:g}")
    return lines
