"""Every `console` example of the README and the manual runs, as written, in a temporary folder
of its page against real workers and the fake Gemini server: the documented commands can't drift
from the command line (a renamed flag, a changed exit code or output file fails here). Each
page's commands run in order in one folder, so a later example reads the files an earlier one
wrote; a command is expected to exit 0 unless its line ends with `# exits N`.

A line that is one `evalq ...` or `python -m evalq.examples ...` command, with no shell syntax,
runs in this process with the page's environment and folder (tests/support/cli.py), as its
child process would; any other line runs in bash. The stack is built once per test process
(session scope), so the pages spread over the processes instead of queueing on one."""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from devtools.local import ROOT
from tests.support.cli import exit_status, run_command, run_evalq
from tests.support.doc_examples import doc_pages, shell_blocks
from tests.support.stack import Stack, stack

pytestmark = pytest.mark.integration

RUN_PAGES = [
    page for page in doc_pages() if any(b.language == "console" for b in shell_blocks(page))
]
COMMAND_TIMEOUT_S = 300
# Pages whose commands a user comes back to: run twice in a row in one folder, on one stack, so
# that the second pass meets the first's jobs of the same --name, as a rerun does.
TWICE = {ROOT / "docs" / "tutorial.md", ROOT / "docs" / "guides" / "calibration.md"}


@pytest.fixture(scope="session")
def doc_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """One stack for the pages a test process runs, with an archive of its own: jobs the
    examples name (`--name "support v1"`) must not meet other tests' jobs of the same name in
    the shared archive."""
    folder = tmp_path_factory.mktemp("doc-stack")
    archive = f"sqlite:///{folder / 'archive.sqlite'}"
    with stack(folder, concurrency=16, EVALQ_ARCHIVE_URL=archive) as s:
        yield s


def test_the_manual_has_examples_to_run() -> None:
    assert len(RUN_PAGES) >= 3, "the tutorial and the getting-started pages run"


@pytest.mark.parametrize("page", RUN_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_pages_console_examples_run_as_written(
    page: Path, doc_stack: Stack, tmp_path: Path
) -> None:
    env = doc_stack.env(
        COLUMNS="100",
        XDG_DATA_HOME=str(tmp_path / "data-home"),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        EVALQ_ROOT=str(ROOT),
    )
    folder = tmp_path / "work"
    folder.mkdir()
    for run in range(2 if page in TWICE else 1):
        for block in shell_blocks(page):
            if block.language != "console":
                continue
            for command, expected in block.commands():
                done = run_line(command, env, folder)
                assert done.returncode == expected, (
                    f"{block.where} (run {run + 1}): `{command}` exited {done.returncode}, not "
                    f"{expected}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
                )


def test_the_pages_run_twice_are_pages_with_examples() -> None:
    assert TWICE.issubset(RUN_PAGES)


# Characters after which a line is shell, not one command: pipes, redirections, variables,
# globs, command lists and substitutions.
_SHELL = set("|&;<>$`*?~(){}[]")


def in_process(command: str) -> list[str] | None:
    """The argv of a line that is one evalq command (or the examples' writer) and nothing else
    of the shell, its trailing comment dropped; None for a line bash must run."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return None
    unquoted = command.split("#", 1)[0]
    if not words or _SHELL & set(unquoted.replace('"', "").replace("'", "")):
        return None
    if words[0] == "evalq" or words[:3] == ["python", "-m", "evalq.examples"]:
        return words
    return None


def run_line(
    command: str, env: Mapping[str, str], folder: Path
) -> subprocess.CompletedProcess[str]:
    argv = in_process(command)
    if argv is None:
        bash = ["bash", "-o", "pipefail", "-c", command]
        return run_command(bash, env, cwd=folder, timeout_s=COMMAND_TIMEOUT_S)
    if argv[0] == "evalq":
        return run_evalq(env, *argv[1:], cwd=folder)
    return _examples(argv[3:], folder)


def _examples(args: list[str], folder: Path) -> subprocess.CompletedProcess[str]:
    """`python -m evalq.examples ARGS` in this process, in `folder`."""
    from evalq.examples.__main__ import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.chdir(folder), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(args)
        except SystemExit as exc:
            code = exit_status(exc.code)
    return subprocess.CompletedProcess(
        ["python", "-m", "evalq.examples", *args], code, out.getvalue(), err.getvalue()
    )
