"""`evalq compare --group-by` names a row's group as `evalq status --group-by` does: trimmed
text, numbers as written, structured values as compact JSON, "(no value)" for none. They once
differed ("(missing)", untrimmed text, Python's repr of a dict), so one row sat in groups of two
names across the two views."""

from __future__ import annotations

import pytest

from evalq.comparisons.groups import group_of
from evalq.core.groups import NO_VALUE, group_summaries
from evalq.core.models import RowResult


def row_in_topic(value: object) -> RowResult:
    extra = {} if value is None else {"topic": value}
    return RowResult(id="r", line=1, prompt="p", status="scored", score=1.0, extra=extra)


@pytest.mark.parametrize(
    ("value", "name"),
    [
        (" news ", "news"),
        (3, "3"),
        ({"b": 1, "a": 2}, '{"a":2,"b":1}'),
        ("", NO_VALUE),
        (None, NO_VALUE),
    ],
)
def test_compare_and_status_name_a_group_alike(value: object, name: str) -> None:
    assert group_of(row_in_topic(value), None, "topic") == name
    (summary,) = group_summaries([row_in_topic(value)], ["topic"])
    assert summary.value == name


def test_side_b_names_the_group_when_side_a_has_no_value() -> None:
    assert group_of(row_in_topic(""), row_in_topic("science"), "topic") == "science"
    assert group_of(None, None, "topic") == NO_VALUE
