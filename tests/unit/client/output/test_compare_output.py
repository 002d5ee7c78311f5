"""The comparison's terminal table, CSV and HTML from hand-built results (no Redis)."""

from __future__ import annotations

import csv
import io

from rich.console import Console

from evalq.client.output.exports.csv_tables import leaderboard_csv
from evalq.client.output.html.comparison import render_comparison
from evalq.client.output.terminal.comparison import print_comparison, print_leaderboard
from evalq.comparisons.align import Side
from evalq.comparisons.comparison import compare_sides
from evalq.comparisons.leaderboard import leaderboard
from evalq.core.models import QuestionResult, RowResult


def coloured_row(row_id: str, prompt: str, colour: int) -> RowResult:
    questions = [
        QuestionResult(
            question="shape?", tag="object", expected="yes", answer="yes", result=1, status="ok"
        ),
        QuestionResult(
            question="colour?",
            tag="color",
            expected="yes",
            answer="yes" if colour else "no",
            result=colour,
            status="ok",
        ),
    ]
    return RowResult(
        id=row_id,
        line=int(row_id),
        prompt=prompt,
        status="scored",
        score=(1 + colour) / 2,
        tag_scores={"object": 1.0, "color": float(colour)},
        questions=questions,
        simulated=True,
    )


def hostile_sides() -> list[Side]:
    hostile = "<script>alert(1)</script> a red circle"
    good = Side(
        "good", [coloured_row(str(i), f"{hostile} {i}", 1) for i in range(8)], simulated=True
    )
    bad = Side(
        "bad",
        [coloured_row(str(i), f"{hostile} {i}", i % 4 == 0) for i in range(8)],
        simulated=True,
    )
    return [good, bad]


def test_terminal_table_names_the_figures_and_the_seed() -> None:
    comparison = compare_sides(hostile_sides())
    console = Console(record=True, width=200)
    print_comparison(console, comparison)
    text = console.export_text()
    assert "SIMULATED" in text
    assert "overall" in text and "tag color" in text
    assert "+0.375" in text  # 6 of 8 rows lose the colour question: (6 * 0.5) / 8
    assert "6/2/0" in text
    assert "seed 15" in text


def test_leaderboard_csv_and_table() -> None:
    comparison = compare_sides(hostile_sides())
    standings = leaderboard(comparison)
    records = list(csv.DictReader(io.StringIO(leaderboard_csv(standings))))
    assert [r["candidate"] for r in records] == ["good", "bad"]
    assert records[0]["tag:color"] == "1.000000" and records[1]["rows:color"] == "8"
    console = Console(record=True, width=200)
    print_leaderboard(console, comparison, standings)
    assert "8 rows scored by every candidate" in console.export_text()


def test_html_escapes_what_the_data_holds() -> None:
    html = render_comparison(compare_sides(hostile_sides()))
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;" in html
    assert 'aria-label="per-tag comparison"' in html
    assert "SIMULATED JUDGE" in html


def test_the_api_function_is_not_shadowed_by_the_domain_package() -> None:
    """`evalq.compare(...)` is the API; the comparison logic's package has another name, so
    importing it never replaces the function with a module."""
    import evalq
    import evalq.comparisons.comparison

    assert callable(evalq.compare)


def test_html_shows_each_groups_paired_difference_with_holm() -> None:
    def grouped(side: Side) -> Side:
        rows = [
            r.model_copy(update={"extra": {"category": "even" if int(r.id) % 2 == 0 else "odd"}})
            for r in side.rows
        ]
        return Side(side.label, rows, simulated=True)

    comparison = compare_sides([grouped(s) for s in hostile_sides()], group_by=["category"])
    html = render_comparison(comparison)
    assert "<h3>Per group</h3>" in html
    groups = comparison.pairs[0].groups
    assert [f"{g.column}={g.value}" for g in groups] == ["category=even", "category=odd"]
    for g in groups:
        assert f"<td>{g.column}={g.value}</td><td>{g.stats.n}</td>" in html
    assert "p Holm (groups)" in html
    assert "<h3>Per group</h3>" not in render_comparison(compare_sides(hostile_sides()))
