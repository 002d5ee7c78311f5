"""Comparisons and leaderboards in the terminal. Every table fits 80 columns without cutting a
figure: two tables, cells that wrap, and the sides' names above the tables (A = ..., B = ...)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from evalq.client.output.comparison_text import counts_line, side_lines
from evalq.client.output.formats import SIMULATED_BANNER, figure_text, p_text
from evalq.client.output.terminal.visible import shown
from evalq.comparisons.comparison import Comparison, PairComparison
from evalq.comparisons.leaderboard import GroupStandings, Standing
from evalq.comparisons.question_diffs import question_differences
from evalq.stats.paired import PairedDifference


def _ci(stats: PairedDifference) -> str:
    if stats.ci95 is None:
        return "n/a"
    mark = "*" if stats.ci_note else ""
    return f"[{stats.ci95[0]:+.3f}, {stats.ci95[1]:+.3f}]{mark}"


def _wtl(stats: PairedDifference) -> str:
    return f"{stats.wins}/{stats.ties}/{stats.losses}"


def narrow_table(title: str | None = None) -> Table:
    """A table whose cells wrap (fold) rather than end in an ellipsis, so nothing it holds
    is lost at 80 columns."""
    return Table(title=title, title_justify="left")


def add_columns(table: Table, names: Sequence[str], nowrap: Sequence[str] = ()) -> None:
    """Columns headed by `names` (a candidate's label among them: the user's text, shown)."""
    for name in names:
        table.add_column(
            shown(name),
            justify="left" if name in ("", "id", "prompt", "candidate", "tag") else "right",
            overflow="fold",
            no_wrap=name in nowrap,
        )


Line = tuple[str, PairedDifference, float | None]  # label, figures, Holm-adjusted p


def pair_lines(pair: PairComparison, several: bool) -> list[Line]:
    """The table's rows: overall (Holm over the pairs), per tag (over the pair's tags), per
    group (over the pair's groups)."""
    lines: list[Line] = [("overall", pair.overall, pair.p_holm if several else None)]
    lines += [(f"tag {t}", d.stats, d.p_holm) for t, d in pair.tags.items()]
    lines += [(f"{g.column}={g.value}", g.stats, g.p_holm) for g in pair.groups]
    return lines


def pair_tables(comparison: Comparison, pair: PairComparison) -> tuple[Table, Table]:
    """The differences and the tests as two tables, each narrow enough for 80 columns."""
    significant = pair.significant(comparison.alpha)
    lines = pair_lines(pair, len(comparison.pairs) > 1)
    title = f"A = {pair.a}, B = {pair.b}: {pair.value.label}, difference A - B"
    figures = narrow_table(shown(title))
    add_columns(figures, ("", "rows", "A", "B", "A - B", "95% CI"), nowrap=("95% CI",))
    tests = narrow_table(shown(f"tests of A - B ({pair.a} - {pair.b})"))
    add_columns(tests, ("", "p perm", "p sign", "W/T/L", "p Holm"))
    for i, (label, s, holm_p) in enumerate(lines):
        name = "[bold]overall[/]" if i == 0 else shown(label)
        diff = figure_text(s.mean_diff, True)
        if i == 0 and significant:
            diff = f"[bold green]{diff}[/]"
        figures.add_row(
            name,
            str(s.n),
            figure_text(s.mean_a),
            figure_text(s.mean_b),
            diff,
            _ci(s),
            end_section=i == 0,
        )
        tests.add_row(
            name,
            p_text(s.p_permutation),
            p_text(s.p_sign),
            _wtl(s),
            "-" if holm_p is None else p_text(holm_p),
            end_section=i == 0,
        )
    return figures, tests


def pair_table(comparison: Comparison, pair: PairComparison) -> Table:
    """The differences table (kept for callers that print one table)."""
    return pair_tables(comparison, pair)[0]


def print_setup_differences(console: Console, comparison: Comparison) -> None:
    """Where the sides were not judged alike, before any figure: a difference read below may
    be the judge's, not the candidates'."""
    for difference in comparison.setup_differences:
        console.print(f"[bold red]{shown(difference.line())}[/]")


def print_comparison(console: Console, comparison: Comparison, top: int = 5) -> None:
    print_setup_differences(console, comparison)
    if any(s.simulated for s in comparison.sides):
        console.print(f"[bold yellow]{SIMULATED_BANNER}[/]")
    pairing = "question (the rubric both share)" if comparison.value.by_question else "row"
    console.print(shown(f"compared on: {comparison.value.label}, paired by {pairing}"))
    for line in side_lines(comparison.sides):
        console.print(shown(line))
    for pair in comparison.pairs:
        figures, tests = pair_tables(comparison, pair)
        console.print(figures)
        console.print(tests)
        for label, s, _ in pair_lines(pair, len(comparison.pairs) > 1):
            if s.ci_note:
                console.print(shown(f"* {label}: {s.ci_note}"))
        if pair.groups:
            console.print("p Holm for groups: over this pair's groups; for tags: over its tags")
        console.print(shown(counts_line(pair)))
        if (asked := pair.question_sets.sentence()) is not None:
            console.print(shown(asked))
        p = pair.p_holm if len(comparison.pairs) > 1 else pair.overall.p_permutation
        verdict = (
            f"significant at {comparison.alpha} (p = {p_text(p)})"
            if pair.significant(comparison.alpha)
            else f"not significant at {comparison.alpha} (p = {p_text(p)})"
        )
        console.print(f"overall difference {figure_text(pair.overall.mean_diff, True)}: {verdict}")
        for words in pair.within_noise:
            console.print(shown(words))
        rows = pair.top_rows(top)
        if rows:
            table = narrow_table("rows that differ most")
            add_columns(table, ("id", "prompt", "A", "B", "A - B"))
            for r in rows:
                table.add_row(
                    shown(r.row.id),
                    shown(r.row.prompt[:60]),
                    figure_text(r.score_a),
                    figure_text(r.score_b),
                    figure_text(r.diff, True),
                )
            console.print(table)
        differ = question_differences(pair.paired, top)
        if differ:
            table = narrow_table("questions met by one side only (prompts)")
            add_columns(table, ("question", "tag", "A only", "B only", "both scored"))
            for d in differ:
                table.add_row(
                    shown(d.question[:70]),
                    shown(d.tag),
                    str(d.a_only),
                    str(d.b_only),
                    str(d.both_scored),
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
        console.print(shown(comparison.holm_note + "; significance uses p Holm"))
    for note in comparison.notes:
        console.print(f"[yellow]note:[/] {shown(note)}")


def leaderboard_table(
    comparison: Comparison, standings: list[Standing], group: GroupStandings | None = None
) -> Table:
    rows = standings[0].rows if standings else 0
    where = "" if group is None else f" for {group.column}={group.value}"
    table = narrow_table(
        shown(
            f"leaderboard{where}: {comparison.value.label} on the {rows} rows scored by every "
            "candidate"
        )
    )
    holm = "Holm" if group is None else "Holm over groups"
    add_columns(
        table, ("#", "candidate", "mean", "95% CI", "rows", f"better than ({holm})"), ("95% CI",)
    )
    for s in standings:
        ci = "n/a" if s.ci95 is None else f"[{s.ci95[0]:.3f}, {s.ci95[1]:.3f}]"
        table.add_row(
            str(s.rank),
            shown(s.label),
            figure_text(s.mean),
            ci,
            str(s.rows),
            shown(", ".join(s.beats)) or "-",
        )
    return table


def tag_table(standings: list[Standing]) -> Table | None:
    """Tag means one tag a line, a column per candidate (in rank order): tags grow down,
    not across, so many tags still fit 80 columns."""
    tags = sorted({t for s in standings for t in s.tags})
    if not tags:
        return None
    table = narrow_table("per tag: mean (rows)")
    add_columns(table, ("tag", *(s.label for s in standings)))
    for tag in tags:
        table.add_row(
            shown(tag),
            *[
                f"{s.tags[tag][0]:.3f} ({s.tags[tag][1]})" if tag in s.tags else "n/a"
                for s in standings
            ],
        )
    return table


def print_leaderboard(
    console: Console,
    comparison: Comparison,
    standings: list[Standing],
    groups: Sequence[GroupStandings] = (),
) -> None:
    print_setup_differences(console, comparison)
    if any(s.simulated for s in comparison.sides):
        console.print(f"[bold yellow]{SIMULATED_BANNER}[/]")
    console.print(leaderboard_table(comparison, standings))
    tags = tag_table(standings)
    if tags is not None:
        console.print(tags)
    for group in groups:
        console.print(leaderboard_table(comparison, group.standings, group))
    for line in side_lines(comparison.sides):
        console.print(shown(line))
    console.print(
        shown(f"paired permutation test per pair at {comparison.alpha}; {comparison.holm_note}")
    )
    for note in comparison.notes:
        console.print(f"[yellow]note:[/] {shown(note)}")
