"""Comparisons and leaderboards in the terminal (rich tables) and as CSV."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table

from evalq.client.csv_safe import safe_writer
from evalq.client.render import SIMULATED_BANNER
from evalq.comparisons.comparison import Comparison, PairComparison
from evalq.comparisons.leaderboard import Standing
from evalq.stats.paired import PairedDifference


def _num(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _p(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def _ci(stats: PairedDifference) -> str:
    if stats.ci95 is None:
        return "n/a"
    return f"[{stats.ci95[0]:+.3f}, {stats.ci95[1]:+.3f}]"


def _wtl(stats: PairedDifference) -> str:
    return f"{stats.wins}/{stats.ties}/{stats.losses}"


def counts_line(pair: PairComparison) -> str:
    c = pair.counts
    parts = [f"{c['paired']} rows paired"]
    for key, label in (
        ("only_a", f"only in {pair.a}"),
        ("only_b", f"only in {pair.b}"),
        ("unscored_a", f"unscored in {pair.a}"),
        ("unscored_b", f"unscored in {pair.b}"),
        ("unscored_both", "unscored in both"),
        ("no_common_questions", "no question scored by both"),
        ("questions_left_out", "questions left out (unscored on a side)"),
        ("rubric_differs", "rows with different rubrics (row scores compared as they are)"),
    ):
        if c.get(key):
            parts.append(f"{c[key]} {label}")
    return "; ".join(parts)


def pair_table(comparison: Comparison, pair: PairComparison) -> Table:
    significant = pair.significant(comparison.alpha)
    title = f"{pair.a} vs {pair.b} (difference = {pair.a} - {pair.b})"
    table = Table(title=title, title_justify="left")
    for column in ("", "rows", pair.a, pair.b, "diff", "95% CI", "p perm", "p sign", "W/T/L"):
        table.add_column(column, justify="left" if column == "" else "right")
    if len(comparison.pairs) > 1:
        table.add_column("p Holm", justify="right")
    o = pair.overall
    overall = [
        "[bold]overall[/]",
        str(o.n),
        _num(o.mean_a),
        _num(o.mean_b),
        ("[bold green]" if significant else "") + _num(o.mean_diff, True),
        _ci(o),
        _p(o.p_permutation),
        _p(o.p_sign),
        _wtl(o),
    ]
    if len(comparison.pairs) > 1:
        overall.append(_p(pair.p_holm))
    table.add_row(*overall, end_section=True)
    for tag, diff in pair.tags.items():
        s = diff.stats
        row = [
            f"tag {tag}",
            str(s.n),
            _num(s.mean_a),
            _num(s.mean_b),
            _num(s.mean_diff, True),
            _ci(s),
            _p(s.p_permutation),
            _p(s.p_sign),
            _wtl(s),
        ]
        if len(comparison.pairs) > 1:
            row.append("")
        table.add_row(*row)
    return table


def print_comparison(console: Console, comparison: Comparison, top: int = 5) -> None:
    if any(s.simulated for s in comparison.sides):
        console.print(f"[bold yellow]{SIMULATED_BANNER}[/]")
    for pair in comparison.pairs:
        console.print(pair_table(comparison, pair))
        console.print(counts_line(pair))
        p = pair.p_holm if len(comparison.pairs) > 1 else pair.overall.p_permutation
        verdict = (
            f"significant at {comparison.alpha} (p = {_p(p)})"
            if pair.significant(comparison.alpha)
            else f"not significant at {comparison.alpha} (p = {_p(p)})"
        )
        console.print(f"overall difference {_num(pair.overall.mean_diff, True)}: {verdict}")
        rows = pair.top_rows(top)
        if rows:
            table = Table(title="rows that differ most", title_justify="left")
            for column in ("id", "prompt", pair.a, pair.b, "diff"):
                table.add_column(column)
            for r in rows:
                table.add_row(
                    r.row.id,
                    r.row.prompt[:60],
                    _num(r.score_a),
                    _num(r.score_b),
                    _num(r.diff, True),
                )
            console.print(table)
        console.print()
    console.print(
        f"paired bootstrap (BCa, {comparison.resamples} resamples, seed {comparison.seed}); "
        f"paired permutation test (exact up to 2^20 sign patterns, else "
        f"{comparison.permutation_resamples} draws, seed {comparison.seed}); rows aligned by "
        f"{comparison.by}"
    )
    if len(comparison.pairs) > 1:
        console.print(comparison.holm_note + "; significance uses p Holm")
    for note in comparison.notes:
        console.print(f"[yellow]note:[/] {note}")


def leaderboard_table(comparison: Comparison, standings: list[Standing]) -> Table:
    tags = sorted({t for s in standings for t in s.tags})
    rows = standings[0].rows if standings else 0
    table = Table(
        title=f"leaderboard ({rows} rows scored by every candidate)", title_justify="left"
    )
    for column in ("#", "candidate", "mean", "95% CI", "rows", *tags, "better than (Holm)"):
        table.add_column(column)
    for s in standings:
        ci = "n/a" if s.ci95 is None else f"[{s.ci95[0]:.3f}, {s.ci95[1]:.3f}]"
        table.add_row(
            str(s.rank),
            s.label,
            _num(s.mean),
            ci,
            str(s.rows),
            *[f"{s.tags[t][0]:.3f} ({s.tags[t][1]})" if t in s.tags else "n/a" for t in tags],
            ", ".join(s.beats) or "-",
        )
    return table


def print_leaderboard(console: Console, comparison: Comparison, standings: list[Standing]) -> None:
    if any(s.simulated for s in comparison.sides):
        console.print(f"[bold yellow]{SIMULATED_BANNER}[/]")
    console.print(leaderboard_table(comparison, standings))
    console.print(f"paired permutation test per pair at {comparison.alpha}; {comparison.holm_note}")
    for note in comparison.notes:
        console.print(f"[yellow]note:[/] {note}")


def leaderboard_csv(standings: list[Standing]) -> str:
    tags = sorted({t for s in standings for t in s.tags})
    buf = io.StringIO()
    writer = safe_writer(buf, lineterminator="\n")
    writer.writerow(
        [
            "rank",
            "candidate",
            "mean",
            "ci_low",
            "ci_high",
            "ci_method",
            "rows",
            *(f"tag:{t}" for t in tags),
            *(f"rows:{t}" for t in tags),
            "significantly_better_than",
        ]
    )
    for s in standings:
        writer.writerow(
            [
                s.rank,
                s.label,
                "" if s.mean is None else f"{s.mean:.6f}",
                "" if s.ci95 is None else f"{s.ci95[0]:.6f}",
                "" if s.ci95 is None else f"{s.ci95[1]:.6f}",
                s.ci_method or "",
                s.rows,
                *(f"{s.tags[t][0]:.6f}" if t in s.tags else "" for t in tags),
                *(s.tags[t][1] if t in s.tags else 0 for t in tags),
                ";".join(s.beats),
            ]
        )
    return buf.getvalue()
