"""The job summary as `evalq status` prints it: the user's text (group values, warnings) shown
as written, never read as markup or terminal codes; colour only on a terminal; the table within
the width it is given."""

from __future__ import annotations

import pytest

from evalq.client.output.terminal.summary import print_summary, summary_lines
from evalq.client.output.terminal.text_table import cells
from evalq.core.counters import JobCounters
from evalq.core.models import JobConfig, JobSummary, RowResult
from evalq.core.summary import build_summary


def grouped_summary(values: list[str], **update: object) -> JobSummary:
    rows = [
        RowResult(
            id=str(i),
            line=i,
            prompt="p",
            status="scored",
            score=float(i % 2),
            tag_scores={"color": float(i % 2)},
            extra={"category": value},
        )
        for i, value in enumerate(values)
    ]
    cfg = JobConfig(
        job_id="j1",
        metric="gecko-image",
        judge_model="m",
        dataset="d",
        rows_total=len(rows),
        created_at=0,
        group_by=["category"],
        **update,  # type: ignore[arg-type]
    )
    return build_summary(cfg, JobCounters(status="finished"), {}, rows, now=1.0)


def test_a_group_value_that_looks_like_markup_is_shown_as_written() -> None:
    """rich read "[/]" in a cell as a closing tag and the whole status command failed."""
    s = grouped_summary(["[/]", "[bold]x", "[/]", "[bold]x"])
    text = "\n".join(summary_lines(s, width=120))
    assert "category=[/]" in text and "category=[bold]x" in text


def test_a_terminal_escape_in_a_group_value_is_printed_escaped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    s = grouped_summary(["\x1b[2Jwiped", "plain"])
    print_summary(s, width=100)
    out = capsys.readouterr().out
    assert "\x1b" not in out  # not a terminal: no colour codes either
    assert "category=\\x1b[2Jwiped" in out


def test_warnings_follow_the_table_literally(capsys: pytest.CaptureFixture[str]) -> None:
    s = grouped_summary(["a", "b"]).model_copy(
        update={"warnings": ["column [/] has no value in 2 rows"]}
    )
    print_summary(s, width=100)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("evalq job j1 · gecko-image · judge m")
    assert out[-1] == "warning: column [/] has no value in 2 rows"


def test_the_printed_table_stays_within_the_width(capsys: pytest.CaptureFixture[str]) -> None:
    print_summary(grouped_summary(["animals", "text"] * 3), width=60)
    lines = capsys.readouterr().out.splitlines()
    assert max(cells(line) for line in lines) == 60
    assert any(line.startswith("│ status ") for line in lines)


def test_the_width_defaults_to_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "50")
    print_summary(grouped_summary(["animals", "text"]))
    assert max(cells(line) for line in capsys.readouterr().out.splitlines()) == 50


def test_a_group_of_one_row_reads_as_one_row() -> None:
    text = "\n".join(summary_lines(grouped_summary(["solo", "pair", "pair"]), width=120))
    solo = next(line for line in text.splitlines() if "category=solo" in line)
    assert "· 1 row (1 scored)" in solo
    assert "· 2 rows (2 scored)" in next(line for line in text.splitlines() if "=pair" in line)


def test_labels_are_bold_on_a_terminal_unless_no_color_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from click.testing import CliRunner

    def printed() -> str:
        with CliRunner().isolation(color=True) as streams:
            print_summary(grouped_summary(["a", "b"]), width=100)
            return streams[0].getvalue().decode()

    assert "│ \x1b[1mstatus" in printed()
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in printed()
