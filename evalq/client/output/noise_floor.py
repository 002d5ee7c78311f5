"""The judge's noise floor (JobSummary.noise_floor) as rows of label and value: the same rows
in `evalq status` and in the report's section, so both read alike."""

from __future__ import annotations

from evalq.client.output.formats import figure_text, interval_text
from evalq.core.models import NoiseFloor, PanelNoise

NOISE_TITLE = "judge noise floor"


def _units(count: int, word: str = "unit") -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _share_row(
    label: str, share: float, of: str, ci95: tuple[float, float] | None
) -> tuple[str, str]:
    """A share of disagreement with what it is out of and its 95% interval."""
    return label, f"{figure_text(share)} of {of} · 95% CI {interval_text(ci95)}"


def noise_rows(floor: NoiseFloor | None) -> list[tuple[str, str]]:
    """The noise floor's figures, each with what it is out of; none without repeats."""
    if floor is None:
        return []
    undecided = f", {floor.undecided} undecided at the maximum" if floor.undecided else ""
    out = [
        (
            NOISE_TITLE,
            f"from {_units(floor.units, 'repeated unit')} ({floor.samples} samples){undecided}",
        )
    ]
    if floor.split_share is not None:
        out.append(_share_row("  samples disagree", floor.split_share, "units", floor.split_ci95))
    if floor.alpha is not None:
        out.append(("  alpha across samples", f"{floor.alpha:.3f} ({floor.alpha_level})"))
    if floor.order_disagreement is not None:
        out.append(
            _share_row(
                "  orders disagree (AB vs BA)",
                floor.order_disagreement,
                _units(floor.order_units, "pair"),
                floor.order_ci95,
            )
        )
    if floor.mean_score_noise_margin is not None:
        out.append(
            (
                "  mean score's judge noise",
                f"±{floor.mean_score_noise_margin:.3f} (95%; a difference smaller than this "
                "is within the judge's own noise)",
            )
        )
    if floor.panel is not None:
        out.append(("  panel", panel_text(floor.panel)))
    return out


def panel_text(panel: PanelNoise) -> str:
    """A panel's error correlation and what it is worth, or why it has no figures."""
    judges = _units(len(panel.judges), "judge")
    if panel.error_correlation is None:
        return f"{judges}: {panel.note or 'no figures'}"
    worth = "n/a" if panel.effective_judges is None else f"{panel.effective_judges:.1f} independent"
    return (
        f"{judges}: error correlation {panel.error_correlation:.3f} against "
        f"{panel.reference} ({_units(panel.units)}), worth {worth}"
    )
