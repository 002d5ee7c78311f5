"""The plain-text box table the job summary is drawn with: widths in terminal cells, wrapping
that keeps a row's spaces, and cell text that can not drive the terminal."""

from __future__ import annotations

from evalq.client.output.terminal.text_table import box_table, cells, column_widths, wrap
from evalq.client.output.terminal.visible import visible


def test_cells_count_wide_characters_twice_and_combining_marks_not_at_all() -> None:
    assert cells("tag") == 3
    assert cells("猫の色") == 6
    assert cells("e\u0301") == 1  # e + combining acute
    assert cells("\u2764\ufe0f") == 1  # a heart and its emoji variation selector


def test_control_characters_are_shown_escaped_not_sent() -> None:
    assert visible("red\x1b[2Jtag") == "red\\x1b[2Jtag"
    assert visible("a\tb\nc") == "a b c"
    assert visible("left\u202eright") == "left\\u202eright"  # a bidi override, shown
    (_, row, _) = box_table("", [("tag\x1b[2J", "0.5\x07")], 80)
    assert row == "│ tag\\x1b[2J │ 0.5\\x07 │"


def test_wrap_keeps_an_indent_and_double_spaces_but_starts_wrapped_lines_at_a_word() -> None:
    assert wrap("  tag color", 20) == ["  tag color"]
    assert wrap("0.746  95% CI [0.587, 0.867] (bca, 18 rows)", 30) == [
        "0.746  95% CI [0.587, 0.867]",
        "(bca, 18 rows)",
    ]


def test_a_word_longer_than_the_column_is_cut_to_fit() -> None:
    lines = wrap("see https://example.com/a/very/long/path/indeed", 12)
    assert all(cells(line) <= 12 for line in lines)
    assert "".join(lines[1:]) == "https://example.com/a/very/long/path/indeed"


def test_wrap_of_empty_text_is_one_empty_line() -> None:
    assert wrap("", 10) == [""]


def test_a_table_that_fits_is_as_wide_as_its_cells_and_never_wider_than_asked() -> None:
    rows = [("status", "finished (2/2 rows)"), ("  tag color", "0.750 · 2 rows")]
    assert column_widths(rows, 200) == (11, 19)
    lines = box_table("evalq job j1", rows, 200)
    assert lines[0] == "evalq job j1"
    assert lines[1] == "┌─────────────┬─────────────────────┐"
    assert lines[2] == "│ status      │ finished (2/2 rows) │"
    assert lines[3] == "│   tag color │ 0.750 · 2 rows      │"
    assert lines[-1] == "└─────────────┴─────────────────────┘"
    narrow = box_table("evalq job j1 · gecko-image · judge gemini-2.5-flash", rows * 3, 30)
    assert all(cells(line) <= 30 for line in narrow)
    assert {cells(line) for line in narrow if line[0] in "┌│└"} == {30}


def test_a_long_label_wraps_before_the_value_column_falls_under_a_third() -> None:
    rows = [("category=" + "x" * 60, "0.500 · 3 rows")]
    label, value = column_widths(rows, 80)
    assert (label, value) == (59, 14)
    rows = [("category=" + "x" * 60, "a value " * 20)]
    assert column_widths(rows, 80) == (49, 24)
    rows = [("mean score (pooled over 2 candidates)", "0.500  95% CI [0.1, 0.9] " * 4)]
    assert column_widths(rows, 80)[0] == 37  # a label of evalq's own stays on one line


def test_wide_characters_keep_the_borders_straight() -> None:
    lines = box_table("", [("  tag 猫の色", "1.000"), ("  tag color", "0.500")], 80)
    assert len({cells(line) for line in lines}) == 1


def test_a_label_style_wraps_the_padded_label_without_moving_the_border() -> None:
    (_, row, _) = box_table("", [("rows", "2")], 80, label_style="<b>{}</b>")
    assert row == "│ <b>rows</b> │ 2 │"


def test_a_terminal_too_narrow_for_the_table_still_gets_straight_borders() -> None:
    lines = box_table("", [("猫の色", "猫の色猫の色")], 5)
    assert len({cells(line) for line in lines}) == 1
