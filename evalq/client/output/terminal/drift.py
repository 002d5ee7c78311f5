"""A drift report in the terminal: the verdict line first, then each figure beside the judge's
own noise, the score's change, the candidates' order, and the rows that changed most."""

from __future__ import annotations

from rich.console import Console

from evalq.client.output.formats import SIMULATED_BANNER
from evalq.client.output.terminal.visible import shown
from evalq.comparisons.drift.report import DriftReport, ScoreChange


def _num(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _ci(bounds: tuple[float, float] | None, signed: bool = False, pct: bool = False) -> str:
    if bounds is None:
        return "n/a"
    if pct:
        return f"[{bounds[0]:.1%}, {bounds[1]:.1%}]"
    return f"[{_num(bounds[0], signed)}, {_num(bounds[1], signed)}]"


def score_line(change: ScoreChange) -> str:
    return (
        f"{change.scope}: {_num(change.mean_old)} -> {_num(change.mean_new)}, change "
        f"{_num(change.change, True)} 95% CI {_ci(change.ci95, True)} ({change.rows} rows)"
    )


def drift_lines(report: DriftReport, top: int = 5) -> list[str]:
    """The report as lines of text (the terminal's, and what tests read)."""
    u, noise = report.units, report.noise
    lines = [
        f"drift {report.old_job} -> {report.new_job} ({report.metric}): judge "
        f"{report.old_judge} -> {report.new_judge}",
        report.verdict.line,
        f"rule: {report.verdict.rule}",
    ]
    if report.old_versions != report.new_versions:
        lines.append(
            f"model versions: {', '.join(report.old_versions) or 'none recorded'} -> "
            f"{', '.join(report.new_versions) or 'none recorded'}"
        )
    lines.append(
        f"rows: {report.rows_paired} on both"
        + (f", {report.rows_only_old} in the old job only" if report.rows_only_old else "")
        + (f", {report.rows_only_new} in the new job only" if report.rows_only_new else "")
    )
    noise_share = "n/a" if noise.share is None else f"{noise.share:.1%} {_ci(noise.ci95, pct=True)}"
    flips = "n/a" if u.share is None else f"{u.share:.1%} {_ci(u.ci95, pct=True)}"
    lines.append(
        f"verdicts changed: {u.changed} of {u.units} units, {flips}; judge's own: {noise_share}"
    )
    if noise.note and noise.source != "none":
        lines.append(f"  noise {noise.note}")
    if u.changes:
        ways = ", ".join(f"{c.before}->{c.after} {c.units}" for c in u.changes[:8])
        lines.append(f"  which way: {ways}")
    if u.left_out:
        lines.append("  left out: " + ", ".join(f"{k} {v}" for k, v in u.left_out.items()))
    if u.kappa is not None:
        own = "" if noise.kappa is None else f"; judge's own {_num(noise.kappa)}"
        lines.append(
            f"agreement: {u.kappa.method} {_num(u.kappa.value)} 95% CI {_ci(u.kappa.ci95)}{own}"
        )
    own_alpha = "" if noise.alpha is None else f"; judge's own {_num(noise.alpha)}"
    lines.append(f"agreement: Krippendorff's alpha ({u.alpha_level}) {_num(u.alpha)}{own_alpha}")
    margin = "" if noise.mean_margin is None else f"; judge's own noise ±{noise.mean_margin:.3f}"
    if noise.mean_change is not None:
        margin += (
            f"; the retest's change {_num(noise.mean_change, True)} "
            f"95% CI {_ci(noise.mean_change_ci95, True)}"
        )
    lines.append(f"score ({report.value}) {score_line(report.score)}{margin}")
    lines += [f"  {score_line(s)}" for s in [*report.tags, *report.groups]]
    if report.ranking is not None:
        r = report.ranking
        lines.append(
            f"ranking ({r.basis}, {r.rows} rows): {' > '.join(r.old_order)} -> "
            f"{' > '.join(r.new_order)}; Kendall's tau-b {_num(r.tau)} 95% CI {_ci(r.tau_ci95)}"
        )
        for swap in r.swaps:
            lines.append(
                f"  swapped: {swap.ahead_before} was ahead of {swap.ahead_after}, now behind"
            )
        if not r.swaps:
            lines.append("  no pair of candidates swaps")
    if report.human is not None:
        lines.append(f"people: {report.human.line}")
    if report.changed_rows:
        lines.append("rows that changed most:")
    for row in report.changed_rows[:top]:
        who = f"{row.id}" + (f" ({row.candidate})" if row.candidate else "")
        what = "; ".join(f"{c.unit}: {c.old}->{c.new}" for c in row.changes[:3])
        more = f" (+{len(row.changes) - 3} more)" if len(row.changes) > 3 else ""
        lines.append(f"  {who}: {row.changed} of {row.units} changed: {what}{more}")
    lines += [f"note: {n}" for n in report.notes]
    return lines


def print_drift(console: Console, report: DriftReport, top: int = 5) -> None:
    if report.simulated:
        console.print(SIMULATED_BANNER, markup=False)
    for line in drift_lines(report, top):
        console.print(shown(line), markup=False, soft_wrap=True)
