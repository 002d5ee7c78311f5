"""Why rows failed, counted (evalq.core.row_errors): the cause without what names the row, the
units' detail behind a generic row error, at most three causes named and the rest counted, in
the summary and in the table `evalq status` prints."""

from __future__ import annotations

import re

from evalq.client.output.terminal.summary import summary_lines
from evalq.core.counters import JobCounters
from evalq.core.models import JobConfig, QuestionResult, RowResult
from evalq.core.row_errors import row_cause, row_errors
from evalq.core.summary import build_summary

TRANSPORT = "transport error: ConnectError: [Errno -2] Name or service not known"


def failed(i: int, error: str, *details: str) -> RowResult:
    questions = [
        QuestionResult(
            question="q?", tag="other", expected="yes", answer=None, result=None,
            status="unscored", reason="judge_error", detail=detail,
        )
        for detail in details
    ]  # fmt: skip
    return RowResult(
        id=f"r{i}", line=i + 2, prompt="p", status="failed", score=None,
        reason="judge_error", error=error, questions=questions,
    )  # fmt: skip


def test_the_row_s_own_name_is_taken_out() -> None:
    row = failed(7, "bad input: row r7: field 'image': file not found")
    assert row_cause(row) == "bad input: field 'image': file not found"
    cell = failed(7, "bad input: row r7, candidate 'b': field 'response': empty")
    assert row_cause(cell) == "bad input: field 'response': empty"
    capped = failed(7, "row r7: gave up after 5 re-drives without a new verdict")
    assert row_cause(capped) == "gave up after 5 re-drives without a new verdict"
    assert row_cause(failed(3, "line 5: unreadable")) == "unreadable"
    assert row_cause(failed(3, "see row r70: other")) == "see row r70: other"  # not this row


def test_a_generic_row_error_is_followed_by_its_units_most_common_detail() -> None:
    row = failed(1, "no question could be scored", TRANSPORT, TRANSPORT, "timeout")
    assert row_cause(row) == f"no question could be scored: {TRANSPORT}"
    said = failed(1, f"preparing the row failed: {TRANSPORT}", TRANSPORT)
    assert row_cause(said) == f"preparing the row failed: {TRANSPORT}"  # not said twice


def test_three_causes_named_the_rest_counted_and_scored_rows_left_out() -> None:
    rows = [failed(i, f"preparing the row failed: row r{i}: {TRANSPORT}") for i in range(6)]
    rows += [failed(10 + i, "no rating could be read", "parse_error") for i in range(2)]
    rows += [failed(20, "a"), failed(21, "b"), failed(22, "c"), failed(23, "c")]
    rows.append(RowResult(id="ok", line=99, prompt="p", status="scored", score=1.0))
    found = row_errors(rows)
    assert found is not None
    assert [(e.rows, e.error) for e in found.top] == [
        (6, f"preparing the row failed: {TRANSPORT}"),
        (2, "no rating could be read: parse_error"),
        (2, "c"),
    ]
    assert (found.other_rows, found.other_errors) == (2, 2)
    assert row_errors(rows[-1:]) is None


def test_status_prints_them_and_json_carries_them() -> None:
    rows = [failed(i, "no question could be scored", TRANSPORT) for i in range(6)]
    rows += [failed(10, "x"), failed(11, "y"), failed(12, "z")]
    cfg = JobConfig(
        job_id="j1", metric="gecko-image", judge_model="m", dataset="d",
        rows_total=len(rows), created_at=0,
    )  # fmt: skip
    counters = JobCounters(status="finished", rows_done=len(rows), rows_failed=len(rows))
    summary = build_summary(cfg, counters, {}, rows, now=1.0)
    text = "\n".join(summary_lines(summary, width=200))
    cause = re.escape(f"6 × no question could be scored: {TRANSPORT}")
    assert re.search(rf"│ row errors +│ {cause}", text)
    assert "1 more with 1 other error (`evalq results j1`)" in text
    data = summary.model_dump(mode="json")["row_errors"]
    assert data["top"][0] == {"error": f"no question could be scored: {TRANSPORT}", "rows": 6}
    assert (data["other_rows"], data["other_errors"]) == (1, 1)
