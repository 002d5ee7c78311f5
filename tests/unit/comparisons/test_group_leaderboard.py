"""`evalq leaderboard --group-by`: the candidates ranked again on each value's rows, with the
differences significant within the group (Holm over each pair's groups), in the table, the
JSON and the CSV. Pure: RowResults in."""

from __future__ import annotations

import csv
import io

import pytest

from evalq.client.output.exports.csv_tables import leaderboard_csv
from evalq.comparisons.align import Side
from evalq.comparisons.comparison import compare_sides
from evalq.comparisons.leaderboard import group_leaderboards, leaderboard, leaderboard_dict
from evalq.core.errors import DatasetError
from evalq.core.groups import NO_VALUE
from evalq.core.models import RowResult


def topic_row(i: int, score: float, topic: str | None) -> RowResult:
    extra = {} if topic is None else {"topic": topic}
    return RowResult(id=f"r{i}", line=i, prompt=f"p{i}", status="scored", score=score, extra=extra)


def topic(i: int) -> str | None:
    return ["news", "sport", None][i % 3]


# A wins on news and loses on sport: overall the two are close, per group they are not.
A = [
    topic_row(i, 1.0 if topic(i) == "news" else 0.0 if topic(i) == "sport" else 0.5, topic(i))
    for i in range(36)
]
B = [
    topic_row(i, 0.0 if topic(i) == "news" else 1.0 if topic(i) == "sport" else 0.5, topic(i))
    for i in range(36)
]


def test_each_group_ranks_on_its_own_rows_with_its_own_significance() -> None:
    result = compare_sides([Side("a", A), Side("b", B)], group_by=["topic"])
    overall = leaderboard(result)
    assert [s.beats for s in overall] == [[], []]  # a tie overall
    groups = {(g.column, g.value): g.standings for g in group_leaderboards(result)}
    assert list(groups) == [("topic", "news"), ("topic", "sport"), ("topic", NO_VALUE)]
    news, sport, none = groups.values()
    assert [(s.label, s.mean, s.rows, s.beats) for s in news] == [
        ("a", 1.0, 12, ["b"]),
        ("b", 0.0, 12, []),
    ]
    assert [(s.label, s.beats, s.beaten_by) for s in sport] == [("b", ["a"], []), ("a", [], ["b"])]
    assert [s.beats for s in none] == [[], []] and {s.mean for s in none} == {0.5}
    assert {s.rows_scored for s in news} == {12}  # the side's scored rows of that group


def test_the_json_and_csv_carry_every_group() -> None:
    result = compare_sides([Side("a", A), Side("b", B)], group_by=["topic"])
    standings, groups = leaderboard(result), group_leaderboards(result)
    data = leaderboard_dict(result, standings, groups)
    assert data["group_by"] == ["topic"]
    assert [(g["value"], g["rows_common"]) for g in data["groups"]] == [
        ("news", 12),
        ("sport", 12),
        (NO_VALUE, 12),
    ]
    assert data["groups"][0]["candidates"][0]["significantly_better_than"] == ["b"]
    assert "groups" not in leaderboard_dict(result, standings)  # without --group-by, no groups
    lines = list(csv.DictReader(io.StringIO(leaderboard_csv(standings, groups))))
    assert [(r["group_column"], r["group_value"], r["candidate"]) for r in lines[:4]] == [
        ("", "", lines[0]["candidate"]),
        ("", "", lines[1]["candidate"]),
        ("topic", "news", "a"),
        ("topic", "news", "b"),
    ]
    assert "group_column" not in leaderboard_csv(standings).splitlines()[0]


def test_a_column_no_row_has_is_refused_by_name() -> None:
    with pytest.raises(DatasetError, match="--group-by 'nope': no row has this column"):
        compare_sides([Side("a", A), Side("b", B)], group_by=["nope"])
