"""Agreement with human labels as `evalq status` and the HTML report show it: one line per
level in status, one table row per level and slice in the report; the same words in both."""

from __future__ import annotations

from evalq.core.models import (
    AgreementFigures,
    AgreementStat,
    HumanAgreement,
    HumanLevelAgreement,
)

STATS = (
    ("spearman", "Spearman"),
    ("kendall", "Kendall"),
    ("pairwise_accuracy", "pairwise acc."),
    ("accuracy", "accuracy"),
    ("kappa", "kappa"),
)


def stat_text(stat: AgreementStat | None) -> str:
    """0.71 [0.52, 0.84]; n/a with the reason when undefined."""
    if stat is None:
        return ""
    if stat.value is None:
        return f"n/a ({stat.note})" if stat.note else "n/a"
    ci = f" [{stat.ci95[0]:.2f}, {stat.ci95[1]:.2f}]" if stat.ci95 else ""
    return f"{stat.value:.2f}{ci}"


def figures_text(f: AgreementFigures, weights: str | None = None) -> str:
    parts = []
    for name, label in STATS:
        stat = getattr(f, name)
        if stat is None:
            continue
        shown = f"{label} ({weights})" if name == "kappa" and weights else label
        unit = f", {stat.n} pairs" if name == "pairwise_accuracy" else ""
        parts.append(f"{shown} {stat_text(stat)}{unit}")
    return " · ".join(parts) or "no statistic"


def left_out_text(level: HumanLevelAgreement) -> str:
    if not level.labels_left_out:
        return "none left out"
    reasons = ", ".join(f"{k} {v}" for k, v in level.left_out_by_reason.items())
    return f"{level.labels_left_out} left out ({reasons})"


def status_lines(agreement: HumanAgreement | None) -> list[tuple[str, str]]:
    """(label, value) rows for the status table: per level its overall figures and labels
    used and left out, then its tags and groups."""
    if agreement is None:
        return []
    out: list[tuple[str, str]] = []
    if agreement.note:
        out.append(("human agreement", agreement.note))
    for level in agreement.levels:
        out.append(
            (
                f"human agreement ({level.level}, {level.source})",
                f"{figures_text(level.overall, level.kappa_weights)} · "
                f"{level.labels_used} labels, {left_out_text(level)}",
            )
        )
        for f in [*level.by_tag, *level.by_group]:
            out.append(
                (f"  {f.scope}", f"{figures_text(f, level.kappa_weights)} · {f.labels} labels")
            )
    return out


def report_rows(agreement: HumanAgreement) -> list[list[str]]:
    """One row per level and slice: level, scope, labels, then each statistic."""
    rows = []
    for level in agreement.levels:
        for f in [level.overall, *level.by_tag, *level.by_group]:
            rows.append(
                [level.level, f.scope, str(f.labels)]
                + [stat_text(getattr(f, name)) for name, _ in STATS]
            )
    return rows


REPORT_HEADER = ["level", "scope", "labels", *(label for _, label in STATS)]
