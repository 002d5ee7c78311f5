"""Every `console` example of the README and the manual runs, as written, in a temporary folder
of its page against real workers and the fake Gemini server: the documented commands can't drift
from the command line (a renamed flag, a changed exit code or output file fails here). Each
page's commands run in order in one folder, so a later example reads the files an earlier one
wrote; a command is expected to exit 0 unless its line ends with `# exits N`."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools.local import ROOT
from tests.support.cli import run_command
from tests.support.doc_examples import doc_pages, shell_blocks
from tests.support.stack import Stack, stack

pytestmark = pytest.mark.integration

RUN_PAGES = [
    page for page in doc_pages() if any(b.language == "console" for b in shell_blocks(page))
]
COMMAND_TIMEOUT_S = 300


@pytest.fixture(scope="module")
def doc_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """One stack for every page, with an archive of its own: jobs the examples name (`--name
    "support v1"`) must not meet other tests' jobs of the same name in the shared archive."""
    folder = tmp_path_factory.mktemp("doc-stack")
    archive = f"sqlite:///{folder / 'archive.sqlite'}"
    with stack(folder, concurrency=16, EVALQ_ARCHIVE_URL=archive) as s:
        yield s


def test_the_manual_has_examples_to_run() -> None:
    assert len(RUN_PAGES) >= 3, "the README's tutorial and the getting-started pages run"


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
    for block in shell_blocks(page):
        if block.language != "console":
            continue
        for command, expected in block.commands():
            argv = ["bash", "-o", "pipefail", "-c", command]
            done = run_command(argv, env, cwd=folder, timeout_s=COMMAND_TIMEOUT_S)
            assert done.returncode == expected, (
                f"{block.where}: `{command}` exited {done.returncode}, not {expected}\n"
                f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
            )
