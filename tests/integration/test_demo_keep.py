"""What the demo prints for later works in a new shell: with `--keep` its Redis, workers, fake
server and Flower stay up (Flower's link answers, the printed `evalq status` line works, the
printed stop command ends them all); without it, the job is read again from the archive once
the demo's private Redis is gone."""

from __future__ import annotations

import os
import re
import shlex
import sys
import urllib.request
from pathlib import Path

import pytest

from devtools.local import free_port, wait_for
from tests.support.cli import bare_env, run_command, run_evalq

pytestmark = pytest.mark.integration


def run_demo(folder: Path, *flags: str) -> tuple[str, dict[str, str]]:
    env = bare_env() | {
        "HOME": str(folder / "home"),
        "EVALQ_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0",  # nothing there: a private one
        "EVALQ_ARCHIVE_URL": f"sqlite:///{folder / 'archive.sqlite'}",
        "COLUMNS": "80",
    }
    argv = [sys.executable, "scripts/demo.py", "--only-image", "--flower-port", "0"]
    done = run_command([*argv, "--keep-dir", str(folder / "demo"), *flags], env, timeout_s=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout, env


def printed_status(output: str) -> tuple[dict[str, str], list[str]]:
    """The `evalq status JOB` the demo said to run later, as (environment, argv)."""
    match = re.search(
        r"read it again any time:\s+((?:EVALQ_\w+=\S+ )*)evalq status (\w{12})", output
    )
    assert match, output
    assigned = dict(part.split("=", 1) for part in shlex.split(match.group(1)))
    return assigned, ["status", match.group(2)]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def test_demo_keep_leaves_everything_running_and_says_how_to_stop_it(tmp_path: Path) -> None:
    output, env = run_demo(tmp_path, "--keep")
    flat = " ".join(output.split())
    pids = [int(p) for p in re.search(r"left running \(pids ([\d ]+)\)", flat).group(1).split()]  # type: ignore[union-attr]
    stop_script = re.search(r"stop them all: (\S+)", output).group(1)  # type: ignore[union-attr]
    try:
        assert "stopped everything" not in flat
        flower = re.search(r"flower: (http://127\.0\.0\.1:\d+)", flat).group(1)  # type: ignore[union-attr]

        def flower_answers() -> bool:
            try:
                with urllib.request.urlopen(flower, timeout=2) as response:
                    return bool(response.status == 200)
            except OSError:
                return False

        wait_for(flower_answers, 60, "Flower at the printed address")
        assigned, argv = printed_status(output)
        assert "EVALQ_REDIS_URL" in assigned  # a private Redis: the line names it
        fresh = bare_env() | {"HOME": str(tmp_path / "elsewhere"), **assigned}
        fresh["EVALQ_ARCHIVE_URL"] = "off"  # read from the kept Redis itself
        status = run_evalq(fresh, *argv)
        assert status.returncode == 0, status.stderr
        assert argv[1] in status.stdout and "finished (18/18 rows)" in status.stdout
    finally:
        stopped = run_command([stop_script], env)
    assert stopped.returncode == 0, stopped.stderr
    wait_for(lambda: not any(alive(p) for p in pids), 60, "the demo's processes to stop")
    assert not Path(stop_script).exists()


def test_without_keep_the_printed_status_line_reads_the_archive(tmp_path: Path) -> None:
    output, env = run_demo(tmp_path)
    flat = " ".join(output.split())
    assert "stopped everything the demo started" in flat
    assert "`./scripts/demo --keep` keeps it" in flat
    assert "source .venv/bin/activate" in flat
    assigned, argv = printed_status(output)
    assert assigned == {}  # nothing to set: the archive has the job
    later = env | {"HOME": str(tmp_path / "elsewhere")}  # a new shell: same archive setting
    status = run_evalq(later, *argv)
    assert status.returncode == 0, status.stderr
    assert "finished (18/18 rows)" in status.stdout
    assert "read from the archive" in " ".join(status.stderr.split())
