"""Every shell example of the README and the manual is either run by the tests (a `console` block)
or says why not (an `sh` block under `<!-- not run: why -->`), so that the only examples not run
are the ones marked as needing real Google credentials, and nothing shell-like is left unfenced."""

from __future__ import annotations

from pathlib import Path

import pytest

from devtools.local import ROOT
from tests.support.doc_examples import doc_pages, indented_commands, misfiled, shell_blocks


@pytest.mark.parametrize("page", doc_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_each_shell_block_is_run_or_says_why_not(page: Path) -> None:
    wrong = [f"{b.where}: {why}" for b in shell_blocks(page) if (why := misfiled(b))]
    unfenced = [
        f"{page.relative_to(ROOT)}:{n}: an unfenced shell command" for n in indented_commands(page)
    ]
    assert not wrong + unfenced, "\n".join(wrong + unfenced)


def test_the_rules_catch_each_misfiled_block(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Text.\n\n```bash\nevalq status JOB\n```\n\n```sh\nevalq worker\n```\n\n"
        "<!-- not run: needs Google credentials -->\n```sh\ngcloud auth login\n```\n\n"
        "```console\n$ evalq run pointwise a.jsonl --wait\nwaiting...\n$ evalq wait x \\\n"
        "  --fail-under 0.9  # exits 1\n```\n\nMore text.\n\n    evalq status JOB\n",
        encoding="utf-8",
    )
    blocks = shell_blocks(page)
    assert [b.language for b in blocks] == ["bash", "sh", "sh", "console"]
    assert [misfiled(b) is None for b in blocks] == [False, False, True, True]
    assert blocks[3].commands() == [
        ("evalq run pointwise a.jsonl --wait", 0),
        ("evalq wait x --fail-under 0.9", 1),
    ]
    assert indented_commands(page) == [len(page.read_text().splitlines())]
