"""A calibration in the terminal: rich tables within 80 columns (intervals to two places),
left-out rows listed under the tables rather than in a cell."""

from __future__ import annotations

from rich.box import SIMPLE_HEAD
from rich.console import Console
from rich.table import Table

from evalq.client.output import calibration_text as said
from evalq.client.output.formats import SIMULATED_BANNER, p_text
from evalq.client.output.terminal.visible import shown
from evalq.core.human.calibration import Calibration


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
            said.estimate_text(s.spearman),
            said.estimate_text(s.kendall),
            said.estimate_text(s.pairwise),
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
            said.cost_per_row_text(s),
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
            said.difference_text(d.difference),
            p_text(d.p_value),
            p_text(d.p_holm) + (" *" if d.significant else ""),
        )
    return table


def print_calibration(console: Console, result: Calibration) -> None:
    if result.simulated:
        console.print(f"[bold yellow]{SIMULATED_BANNER}[/]")
    console.print(shown(said.headline(result)))
    console.print(agreement_table(result))
    console.print(rows_table(result))
    for line in said.left_out_lines(result):
        console.print(shown(f"left out: {line}"))
    if result.differences:
        console.print(differences_table(result))
        console.print("* significant at 0.05 after Holm's correction")
    for line in said.note_lines(result):
        console.print(shown(f"note: {line}"))
    for line in said.verdict_lines(result):
        console.print(shown(line))


__all__ = ["print_calibration"]
