"""Every exit code of `evalq` is named in one module (evalq.client.cli.exit_codes), and the
manual's table (docs/concepts/jobs-rows-units.md) says the same, row for row: a code added, changed or dropped on either side
fails here. The commands exit only through those names, never with a number of their own."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from evalq.client.cli import exit_codes
from evalq.client.cli.exit_codes import MEANINGS
from tests.support.cli import bare_env, one_line_refusal, refusal_lines, run_evalq

ROOT = Path(__file__).resolve().parents[3]
CLI = ROOT / "evalq" / "client" / "cli"
ROW = re.compile(r"\| `(\d+)` \| (.*) \|")


def manual_table() -> dict[int, str]:
    """The rows of the manual's "## Exit codes" table, code -> meaning."""
    text = (ROOT / "docs" / "concepts" / "jobs-rows-units.md").read_text(encoding="utf-8")
    section = text.split("\n## Exit codes\n", 1)[1].split("\n#", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| `")]
    rows = [ROW.fullmatch(line) for line in lines]
    assert all(rows), [line for line, row in zip(lines, rows, strict=True) if row is None]
    codes = [int(row.group(1)) for row in rows if row]
    assert len(codes) == len(set(codes)), f"a code is in the manual's table twice: {codes}"
    return {int(row.group(1)): row.group(2) for row in rows if row}


def test_the_manual_table_is_the_codes_module_row_for_row() -> None:
    table = manual_table()
    assert list(table) == list(MEANINGS), "the codes, in order"
    for code, meaning in MEANINGS.items():
        assert table[code] == meaning, f"exit {code}"


def test_every_named_code_has_a_meaning_and_codes_are_distinct() -> None:
    named = {
        name: value
        for name, value in vars(exit_codes).items()
        if name.isupper() and isinstance(value, int)
    }
    assert sorted(named.values()) == sorted(MEANINGS)
    assert len(set(named.values())) == len(named), named


def test_the_commands_exit_only_through_the_named_codes() -> None:
    """No `sys.exit(3)`, `SystemExit(1)` or `exit_code = 130` in the CLI: a number of its own
    would be a code the manual does not list."""
    literal = re.compile(r"(sys\.exit|SystemExit|exit_code\s*=)\s*\(?\s*\d")
    found = [
        f"{path.name}:{n}: {line.strip()}"
        for path in sorted(CLI.glob("*.py"))
        if path.name != "exit_codes.py"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if literal.search(line)
    ]
    assert found == []


def test_clicks_own_usage_errors_exit_with_the_error_code() -> None:
    """Click's refusals (a bad flag, a missing argument) keep click's code, which is ours."""
    assert click.UsageError("x").exit_code == exit_codes.ERROR
    assert click.BadParameter("x").exit_code == exit_codes.ERROR


@pytest.mark.parametrize(
    ("error", "code", "said"),
    [
        (ValueError("boom"), exit_codes.BUG, "evalq's own bug"),
        (PermissionError(13, "Permission denied", "/x.csv"), exit_codes.ERROR, "/x.csv"),
    ],
)
def test_an_error_no_command_named_gets_its_own_code(
    error: Exception, code: int, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bug is never exit 1 (a threshold not met): it prints its traceback and exits 70; a
    file that can't be written is the user's to fix, in one line."""
    from evalq.client.cli import _failed

    try:
        raise error
    except Exception as exc:
        assert _failed(exc) == code
    err = capsys.readouterr().err
    assert said in " ".join(err.split())
    assert ("Traceback" in err) == (code == exit_codes.BUG)


def test_a_malformed_setting_stops_a_command_in_one_line() -> None:
    """Through the CLI as a user meets it: one line naming the variable, exit 2, no
    traceback; several settings refused, a line each (a field read under Google's name by
    that name)."""
    env = {**bare_env(), "EVALQ_GCS_MEDIA": "gs://team-media,gs://Payroll"}
    said = one_line_refusal(run_evalq(env, "jobs"))
    assert said == (
        "error: EVALQ_GCS_MEDIA: 'gs://Payroll': bucket 'Payroll' is not lower case (Cloud "
        "Storage bucket names are); give gs://BUCKET or gs://BUCKET/FOLDER/, comma-separated"
    )
    env = {**bare_env(), "EVALQ_JUDGE_TIMEOUT_S": "-1", "GOOGLE_GENAI_USE_VERTEXAI": "maybe"}
    said = refusal_lines(run_evalq(env, "jobs"))
    assert [line.split(":")[0] for line in said] == [
        "GOOGLE_GENAI_USE_VERTEXAI",
        "EVALQ_JUDGE_TIMEOUT_S",
    ], said
