"""evalq.client.output.terminal.visible: the one function every printer shows the user's and
the judge's text with. Nothing a terminal would obey gets through (control characters, C1, bidi overrides and
other format characters, line separators, lone surrogates); text without them is printed as
it is; JSON keeps its values. Then the printers themselves, on a console that is not the
guarded one: the tables escape their cells, not only the console."""

from __future__ import annotations

import io
import json
import re
import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from evalq.client.output.terminal.console import TerminalConsole
from evalq.client.output.terminal.visible import shown, visible

fuzz = settings(max_examples=500, deadline=None)

# The spec, written out apart from the module: what may never reach the terminal raw.
NEVER_RAW = ("Cc", "Cf", "Cs", "Zl", "Zp")
JOINERS = "\u200c\u200d"  # shape scripts and emoji, move nothing: kept
BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)]
C1 = [chr(c) for c in range(0x80, 0xA0)]
HOSTILE = "\x1b]0;owned\x07\x1b[2J\x9b2J\u202e"


def obeyed(text: str, allowed: str = "") -> list[str]:
    """The characters of `text` a terminal would obey, but those `allowed`."""
    return [
        c
        for c in text
        if unicodedata.category(c) in NEVER_RAW and c not in JOINERS and c not in allowed
    ]


any_text = st.text(alphabet=st.characters(exclude_categories=()))  # surrogates too
printable_text = st.text(
    alphabet=st.one_of(st.characters(exclude_categories=NEVER_RAW), st.sampled_from(JOINERS))
)


@fuzz
@given(any_text)
def test_nothing_a_terminal_obeys_gets_through(text: str) -> None:
    assert obeyed(visible(text)) == []
    assert obeyed(visible(text, multiline=True), allowed="\n") == []
    assert obeyed(shown(text)) == []


@fuzz
@given(printable_text)
def test_text_without_them_is_printed_as_it_is(text: str) -> None:
    assert visible(text) == text
    assert visible(text, multiline=True) == text
    assert visible(text, as_json=True) == text


@fuzz
@given(any_text)
def test_showing_twice_is_showing_once(text: str) -> None:
    once = visible(text)
    assert visible(once) == once
    lines = visible(text, multiline=True)
    assert visible(lines, multiline=True) == lines


@fuzz
@given(
    st.recursive(
        st.none() | any_text,
        lambda inner: st.lists(inner) | st.dictionaries(any_text, inner),
        max_leaves=8,
    )
)
def test_json_keeps_every_value(value: object) -> None:
    document = json.dumps(value, ensure_ascii=False)
    written = visible(document, as_json=True)
    assert json.loads(written) == value
    assert obeyed(written) == []


@pytest.mark.parametrize("char", ["\x00", "\x07", "\x08", "\x1b", "\x7f", *C1, *BIDI, "\u2028"])
def test_each_control_bidi_or_separator_character_is_shown_as_its_escape(char: str) -> None:
    code = ord(char)
    expected = f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"
    assert visible(f"a{char}b") == f"a{expected}b"
    assert visible(f"a{char}b", as_json=True) == f"a\\u{code:04x}b"


def test_how_it_looks() -> None:
    assert visible(f"r1{HOSTILE}") == "r1\\x1b]0;owned\\x07\\x1b[2J\\x9b2J\\u202e"
    # Whitespace: one line by default, line breaks kept when asked; a lone CR always shown.
    assert visible("a\tb\nc\r\nd\re") == "a b c d\\re"
    assert visible("a\tb\nc\r\nd\re", multiline=True) == "a b\nc\nd\\re"
    # A file name's undecodable byte, and a character past the BMP.
    assert visible("rows\udc9b.csv") == "rows\\udc9b.csv"
    assert visible("\U000e0001") == "\\U000e0001"
    assert visible("\U000e0001", as_json=True) == "\\udb40\\udc01"
    # Other scripts, emoji (with their joiner), box drawing: as they are.
    family = "猫の色 é ✓ \U0001f468\u200d\U0001f469\u200d\U0001f467 ┃ \u00a0"
    assert visible(family) == family
    # Markup too, for rich: shown as written, never read as a style.
    assert shown("[bold]x[/]\x1b") == "\\[bold]x\\[/]\\x1b"
    assert visible(3.5) == "3.5"


SGR = re.compile(r"\x1b\[[0-9;]*m")


def test_the_console_sends_no_control_character_a_printer_forgot() -> None:
    """The guard under every printer: text given to rich as it is (a Text, no markup) still
    goes out escaped, while rich's own styling and line breaks go out as rich made them."""
    out = io.StringIO()
    console = TerminalConsole(file=out, force_terminal=True, color_system="standard", width=80)
    console.print(Text(f"row r1{HOSTILE}\nnext", style="bold"))
    written = out.getvalue()
    assert "\x1b[1m" in written  # rich's bold, on a terminal
    assert obeyed(SGR.sub("", written), allowed="\n") == []
    assert "r1\\x1b]0;owned\\x1b[2J\\x9b2J\\u202e" in written  # rich itself drops a BEL
    assert "next" in written.splitlines()[-1]


def test_the_tables_escape_their_cells_on_any_console() -> None:
    """The printers escape, not only the console: on a plain rich console (a caller's own)
    the jobs table and the dry run's table hold no raw control character either."""
    from evalq.client.output.terminal.tables import jobs_table, print_dry_run
    from evalq.core.counters import JobCounters
    from evalq.core.dry_report import DryRunReport, RejectedRow
    from evalq.core.models import JobConfig
    from evalq.core.summary import build_summary

    named = {"name": f"n{HOSTILE}", "dataset": f"/d/rows{HOSTILE}.jsonl", "metric": "pointwise"}
    config = JobConfig(job_id="j1", judge_model="m", rows_total=0, created_at=0, **named)
    summary = build_summary(config, JobCounters(status="finished"), {}, [], now=1.0)
    out = io.StringIO()
    Console(file=out, width=200).print(jobs_table([summary]))
    assert obeyed(out.getvalue(), allowed="\n") == []
    assert "rows\\x1b]0;owned" in out.getvalue()

    plan = DryRunReport(
        metric="pointwise",
        dataset=f"/d/rows{HOSTILE}.jsonl",
        rows_total=2,
        rows_planned=1,
        rows_rejected=1,
        rejected=[RejectedRow(line=2, id=f"bad{HOSTILE}", error=f"row bad{HOSTILE}: no response")],
        judge_models=[f"judge{HOSTILE}"],
        warnings=[f"unknown column 'note{HOSTILE}'"],
    )
    out = io.StringIO()
    print_dry_run(Console(file=out, width=200), plan)
    assert obeyed(out.getvalue(), allowed="\n") == []
    assert "row bad\\x1b]0;owned" in out.getvalue()
    assert "note\\x1b]0;owned" in out.getvalue()


def test_a_usage_error_quoting_the_command_line_is_shown_escaped(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalq.client.cli import cli_entry

    monkeypatch.setattr(sys, "argv", ["evalq", "jobs", f"--bogus{HOSTILE}"])
    with pytest.raises(SystemExit) as ended:
        cli_entry()
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert obeyed(err, allowed="\n") == []
    assert "--bogus\\x1b]0;owned\\x07" in err
