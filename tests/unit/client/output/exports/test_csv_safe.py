"""CSV exports can't run code in a spreadsheet: a text cell a spreadsheet would read as a formula
gets a leading quote; numbers, and texts that are only a number, stay as they are. Checked on the
one shared function and on both CSV writers (no Redis)."""

from __future__ import annotations

import csv
import io

import pytest

from evalq.client.output.exports.csv_safe import safe_cell
from evalq.client.output.exports.csv_tables import leaderboard_csv, results_csv
from evalq.comparisons.align import Side
from evalq.comparisons.comparison import compare_sides
from evalq.comparisons.leaderboard import leaderboard
from evalq.core.models import RowResult


@pytest.mark.parametrize(
    ("given", "written"),
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("-", "'-"),
        ("-inf", "'-inf"),
        ("a = b", "a = b"),
        (" =1", " =1"),
        ("", ""),
        ("-0.5", "-0.5"),
        ("+1", "+1"),
        ("-1e-05", "-1e-05"),
        ("-.25", "-.25"),
        (-0.5, -0.5),
        (3, 3),
        (True, True),
        (None, None),
    ],
)
def test_only_texts_a_spreadsheet_reads_as_formulas_are_quoted(
    given: object, written: object
) -> None:
    assert safe_cell(given) == written


def exported_row(
    row_id: str, prompt: str, score: float | None, error: str | None = None
) -> RowResult:
    return RowResult(
        id=row_id,
        line=1,
        prompt=prompt,
        status="scored" if score is not None else "failed",
        score=score,
        tag_scores={} if score is None else {"color": score},
        error=error,
    )


def test_results_csv_quotes_formula_texts_and_keeps_negative_scores_numbers() -> None:
    rows = [
        exported_row("=1+1", "@SUM(A1)", -0.5),
        exported_row("-x", "+plain", None, error="-cmd failed"),
        exported_row("ok", "a red circle", 0.25),
    ]
    records = list(csv.DictReader(io.StringIO(results_csv(rows))))
    assert [r["id"] for r in records] == ["'=1+1", "'-x", "ok"]
    assert [r["prompt"] for r in records] == ["'@SUM(A1)", "'+plain", "a red circle"]
    assert records[1]["error"] == "'-cmd failed"
    assert (records[0]["score"], records[0]["tag:color"]) == ("-0.5", "-0.5")
    assert float(records[0]["score"]) == -0.5


def test_leaderboard_csv_quotes_labels_that_would_be_formulas() -> None:
    rows = [exported_row(str(i), "p", 0.5 + 0.5 * (i % 2)) for i in range(4)]
    worse = [exported_row(str(i), "p", 0.5) for i in range(4)]
    standings = leaderboard(compare_sides([Side("=HYPERLINK(1)", rows), Side("@evil", worse)]))
    records = list(csv.DictReader(io.StringIO(leaderboard_csv(standings))))
    assert sorted(r["candidate"] for r in records) == ["'=HYPERLINK(1)", "'@evil"]
    assert all(float(r["mean"]) >= 0 for r in records)
