"""A reader that closes the pipe (`evalq status X | head`) is not a failure: exit 0 and no
traceback, for rich's output, click's, and the help. A real process: its pipe is the point."""

from __future__ import annotations

import os
import subprocess

import pytest

from devtools.local import EVALQ
from evalq.worker.store import Store
from tests.support.cli import TIMEOUT_S, bare_env
from tests.support.scratch import plant_job


def into_a_closed_pipe(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before evalq writes, as `| head` that has had enough
    try:
        return subprocess.run(
            [*EVALQ, *args],
            stdout=write,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    finally:
        os.close(write)


@pytest.mark.parametrize(
    "args", [["status", "JOB"], ["status", "JOB", "--json"], ["jobs"], ["--help"]]
)
def test_a_closed_pipe_ends_the_command_with_exit_0(
    scratch_url: str, store: Store, args: list[str]
) -> None:
    job = plant_job(store, 3)
    env = bare_env() | {"EVALQ_REDIS_URL": scratch_url, "EVALQ_ARCHIVE_URL": "off"}
    done = into_a_closed_pipe(env, *[job if a == "JOB" else a for a in args])
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Broken pipe" not in done.stderr
