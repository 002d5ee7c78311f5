"""A calibration in words, as the terminal and the HTML page both say it: its figures with
their intervals, its headline, the rows left out, the notes and the verdict."""

from __future__ import annotations

from evalq.core.human.calibration import Calibration, SetupAgreement
from evalq.core.human.estimate import Estimate

SHOWN_IDS = 5  # left-out row ids named per reason; `--json` has them all


def estimate_text(estimate: Estimate, *, signed: bool = False) -> str:
    """`0.95 [0.81, 1.00]` (`+0.69 [+0.29, +1.05]` signed); `n/a` with no value, the value
    alone with no interval."""
    if estimate.value is None:
        return "n/a"
    form = "+.2f" if signed else ".2f"
    text = format(estimate.value, form)
    if estimate.ci95 is not None:
        text += f" [{format(estimate.ci95[0], form)}, {format(estimate.ci95[1], form)}]"
    return text


def difference_text(estimate: Estimate) -> str:
    return estimate_text(estimate, signed=True)


def cost_per_row_text(setup: SetupAgreement) -> str:
    """Dollars per row, "unknown" when not priced (never $0), marked "estimate" when the
    judge was simulated and nothing was billed."""
    value = setup.cost_per_row_usd
    if value is None:
        return "unknown"
    money = f"${value:.6f}" if value < 0.01 else f"${value:.4f}"
    return f"{money} estimate" if setup.simulated else money


def pairs_basis(result: Calibration) -> str:
    return (
        f"rows sharing a {result.group_by!r} value" if result.group_by else "rows sharing a prompt"
    )


def headline(result: Calibration) -> str:
    return (
        f"Agreement with the human labels in column {result.human!r}: 95% intervals by "
        f"bootstrap over rows ({result.resamples} resamples, seed {result.seed}); pairwise "
        f"accuracy over {pairs_basis(result)}."
    )


def left_out_lines(result: Calibration) -> list[str]:
    lines = []
    for s in result.setups:
        for why, ids in s.left_out_ids.items():
            shown = ", ".join(ids[:SHOWN_IDS]) + (" ..." if len(ids) > SHOWN_IDS else "")
            lines.append(f"{s.name}: {len(ids)} {why} ({shown})")
    return lines


def note_lines(result: Calibration) -> list[str]:
    """Why a figure is missing or has no interval, in the statistics' own words."""
    lines = []
    for s in result.setups:
        for label, estimate in (
            ("Spearman", s.spearman),
            ("Kendall", s.kendall),
            ("pairwise accuracy", s.pairwise),
        ):
            if estimate.note:
                lines.append(f"{s.name} {label}: {estimate.note}")
    for d in result.differences:
        if d.difference.note:
            lines.append(f"{d.a} - {d.b}: {d.difference.note}")
    return lines


def verdict_lines(result: Calibration) -> list[str]:
    top = next((s for s in result.setups if s.name == result.most_agreeing), None)
    lines = [
        f"Most agreeing: {top.name} (Spearman {estimate_text(top.spearman)})"
        if top is not None
        else "Most agreeing: none (no setup has a Spearman value)"
    ]
    best = result.best_per_cost or "cannot say"
    lines.append(f"Best per unit of cost: {best}; defined as {result.best_per_cost_why}.")
    return lines
