"""A calibration in the terminal (rich tables within 80 columns: intervals to two places,
left-out rows listed under the tables rather than in a cell) and as a small self-contained
HTML page (autoescaped: setup names, row ids and notes are the user's text)."""

from __future__ import annotations

from rich.box import SIMPLE_HEAD
from rich.console import Console
from rich.table import Table

from evalq.client.formats import SIMULATED_BANNER, p_text
from evalq.client.html_page import render_page
from evalq.client.visible import shown
from evalq.core.human.calibration import Calibration, SetupAgreement, counts_text
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


def _table(title: str, columns: list[str]) -> Table:
    table = Table(title=title, title_justify="left", box=SIMPLE_HEAD, pad_edge=False)
    for i, name in enumerate(columns):
        table.add_column(name, justify="left" if i == 0 else "right", overflow="fold")
    return table


def agreement_table(result: Calibration) -> Table:
    table = _table("Agreement", ["setup", "Spearman", "Kendall tau-b", "pairwise acc."])
    for s in result.setups:
        table.add_row(
            shown(s.name),
            estimate_text(s.spearman),
            estimate_text(s.kendall),
            estimate_text(s.pairwise),
        )
    return table


def rows_table(result: Calibration) -> Table:
    table = _table("Rows and cost", ["setup", "job", "rows used", "left out", "pairs", "cost/row"])
    for s in result.setups:
        table.add_row(
            shown(s.name),
            shown(s.job_id),
            f"{s.used}/{s.rows}",
            str(sum(s.left_out.values())),
            str(s.pairwise.n),
            cost_per_row_text(s),
        )
    return table


def differences_table(result: Calibration) -> Table:
    pairs = len(result.differences)
    title = f"Spearman A - B on the rows both scored (Holm over {pairs} pair(s))"
    table = _table(title, ["A", "B", "rows", "difference [95% CI]", "p", "p Holm"])
    for d in result.differences:
        table.add_row(
            shown(d.a),
            shown(d.b),
            str(d.difference.n),
            difference_text(d.difference),
            p_text(d.p_value),
            p_text(d.p_holm) + (" *" if d.significant else ""),
        )
    return table


def print_calibration(console: Console, result: Calibration) -> None:
    if result.simulated:
        console.print(f"[bold yellow]{SIMULATED_BANNER}[/]")
    console.print(shown(headline(result)))
    console.print(agreement_table(result))
    console.print(rows_table(result))
    for line in left_out_lines(result):
        console.print(shown(f"left out: {line}"))
    if result.differences:
        console.print(differences_table(result))
        console.print("* significant at 0.05 after Holm's correction")
    for line in note_lines(result):
        console.print(shown(f"note: {line}"))
    for line in verdict_lines(result):
        console.print(shown(line))


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>evalq calibrate: {{ r.human }}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 10px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.banner { background: #fff3cd; padding: 8px; font-weight: bold; }
.sig { font-weight: bold; }
</style></head><body>
<h1>Which judge setup agrees with the raters?</h1>
{% if r.simulated %}<p class="banner">{{ banner }}</p>{% endif %}
<p>{{ headline }}</p>
<h2>Agreement</h2>
<table><tr><th>setup</th><th>Spearman</th><th>Kendall tau-b</th><th>pairwise accuracy</th>
<th>rows used</th><th>left out</th><th>pairs</th><th>cost/row</th></tr>
{% for s in r.setups %}<tr><td>{{ s.name }} <small>({{ s.job_id }})</small></td>
<td>{{ est(s.spearman) }}</td><td>{{ est(s.kendall) }}</td><td>{{ est(s.pairwise) }}</td>
<td>{{ s.used }}/{{ s.rows }}</td><td>{{ counts(s.left_out) }}</td><td>{{ s.pairwise.n }}</td>
<td>{{ cost(s) }}</td></tr>
{% endfor %}</table>
{% if left %}<h3>Rows left out</h3><ul>{% for line in left %}<li>{{ line }}</li>{% endfor %}</ul>{% endif %}
{% if r.differences %}<h2>Paired differences: Spearman A - B</h2>
<p>On the rows both setups scored; bootstrap over rows; Holm's correction over
{{ r.differences | length }} pair(s); bold: significant at 0.05 after it.</p>
<table><tr><th>A</th><th>B</th><th>rows</th><th>difference [95% CI]</th><th>p</th>
<th>p Holm</th></tr>
{% for d in r.differences %}<tr{% if d.significant %} class="sig"{% endif %}><td>{{ d.a }}</td>
<td>{{ d.b }}</td><td>{{ d.difference.n }}</td><td>{{ diff(d.difference) }}</td>
<td>{{ p(d.p_value) }}</td><td>{{ p(d.p_holm) }}</td></tr>
{% endfor %}</table>{% endif %}
{% if notes %}<h3>Notes</h3><ul>{% for line in notes %}<li>{{ line }}</li>{% endfor %}</ul>{% endif %}
{% for line in verdict %}<p><strong>{{ line }}</strong></p>{% endfor %}
</body></html>
"""


# What the page formats its figures with.
_HELPERS = {
    "banner": SIMULATED_BANNER,
    "est": estimate_text,
    "diff": difference_text,
    "p": p_text,
    "cost": cost_per_row_text,
    "counts": counts_text,
}


def render_calibration_html(result: Calibration) -> str:
    return render_page(
        _PAGE,
        _HELPERS,
        r=result,
        headline=headline(result),
        left=left_out_lines(result),
        notes=note_lines(result),
        verdict=verdict_lines(result),
    )


__all__ = ["print_calibration", "render_calibration_html"]
