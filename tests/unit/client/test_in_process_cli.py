"""The suite runs most `evalq` commands in its own process (tests/support/cli.py): that is only
honest while a command prints, byte for byte, what its child process prints and exits with the
same code. Checked here on commands that need no worker: help (click's wrapping), a refusal by
click, a refusal by evalq, a Redis that does not answer and a job that is nowhere. The child is
the installed `evalq` script, the user's entry point (`python -m evalq` names itself so)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from devtools.local import free_port
from tests.support.cli import bare_env, run_command, run_evalq


@pytest.mark.parametrize(
    "args",
    [
        ("run", "--help"),
        ("run", "pointwise", "{data}", "--no-such-flag"),
        ("run", "pointwise", "{data}", "--samples", "0"),
        ("status", "0123456789ab"),
        ("status", "0123456789ab", "--redis-url", "{closed}"),
        ("jobs", "--json"),
    ],
    ids=" ".join,
)
def test_a_command_in_process_says_what_its_child_process_says(
    args: tuple[str, ...], scratch_url: str, tmp_path: Path
) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "a", "response": "r"}\n', encoding="utf-8")
    closed = f"redis://127.0.0.1:{free_port()}/0"
    argv = [a.format(data=data, closed=closed) for a in args]
    env = {
        **bare_env(),
        "EVALQ_REDIS_URL": scratch_url,
        "EVALQ_ARCHIVE_URL": f"sqlite:///{tmp_path / 'archive.sqlite'}",
        "COLUMNS": "80",
    }
    child = run_command([str(Path(sys.executable).parent / "evalq"), *argv], env)
    here = run_evalq(env, *argv)
    assert (here.returncode, here.stdout, here.stderr) == (
        child.returncode,
        child.stdout,
        child.stderr,
    )


def test_a_command_in_process_leaves_the_test_process_as_it_found_it(
    scratch_url: str, tmp_path: Path
) -> None:
    """The environment, the folder, the standard streams and the collector are put back."""
    import gc

    before = (dict(os.environ), os.getcwd(), sys.stdout, sys.stderr, sys.argv, gc.isenabled())
    env = {**bare_env(), "EVALQ_REDIS_URL": scratch_url, "EVALQ_ONLY_IN_THE_COMMAND": "1"}
    done = run_evalq(env, "jobs", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    after = (dict(os.environ), os.getcwd(), sys.stdout, sys.stderr, sys.argv, gc.isenabled())
    assert after == before
