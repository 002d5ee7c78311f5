"""What the demo prints for later works in a new shell: with `--keep` its Redis, workers, fake
server and Flower stay up (Flower's link answers, the printed `evalq status` line works, the
printed stop command ends them all); and the job is read again from the archive where the
demo's private Redis is not, which is all the line a run without `--keep` prints relies on
(that run prints it bare and stops its processes: tests/unit/scripts/test_demo_output.py).

The demo runs once for the module, with `--keep`: each run costs a Redis, a worker, Flower,
the fake server and a job, and the archive read needs nothing a second run would add."""

from __future__ import annotations

import os
import re
import shlex
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from redis import Redis

from devtools.local import free_port, wait_for
from tests.support.archive import wait_archived
from tests.support.cli import bare_env, run_command, run_evalq

pytestmark = pytest.mark.integration


@dataclass(frozen=True)
class KeptDemo:
    folder: Path
    output: str  # what the demo printed
    env: dict[str, str]  # what it ran with: a Redis URL where nothing answers, its archive
    stop_script: Path


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


@pytest.fixture(scope="module")
def kept_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeptDemo]:
    """`scripts/demo.py --keep`, finished, its processes left running and its job written to
    the archive (the kept Redis says so); whatever a test left running is stopped after the
    module with the script the demo wrote."""
    folder = tmp_path_factory.mktemp("demo")
    env = bare_env() | {
        "HOME": str(folder / "home"),
        "EVALQ_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0",  # nothing there: a private one
        "EVALQ_ARCHIVE_URL": f"sqlite:///{folder / 'archive.sqlite'}",
        "COLUMNS": "80",
    }
    argv = [sys.executable, "scripts/demo.py", "--only-image", "--flower-port", "0"]
    done = run_command([*argv, "--keep-dir", str(folder / "demo"), "--keep"], env, timeout_s=600)
    stop_script = folder / "demo" / "stop"
    try:
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assigned, (_, job_id) = printed_status(done.stdout)
        wait_archived(Redis.from_url(assigned["EVALQ_REDIS_URL"]), job_id)
        yield KeptDemo(folder, done.stdout, env, stop_script)
    finally:
        if stop_script.exists():
            run_command([str(stop_script)], env)


def test_demo_keep_leaves_everything_running_and_says_how_to_stop_it(
    kept_demo: KeptDemo,
) -> None:
    output, env = kept_demo.output, kept_demo.env
    flat = " ".join(output.split())
    pids = [int(p) for p in re.search(r"left running \(pids ([\d ]+)\)", flat).group(1).split()]  # type: ignore[union-attr]
    stop_script = re.search(r"stop them all: (\S+)", output).group(1)  # type: ignore[union-attr]
    assert Path(stop_script) == kept_demo.stop_script
    try:
        assert "stopped everything" not in flat
        assert "source .venv/bin/activate" in flat
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
        fresh = bare_env() | {"HOME": str(kept_demo.folder / "elsewhere"), **assigned}
        fresh["EVALQ_ARCHIVE_URL"] = "off"  # read from the kept Redis itself
        status = run_evalq(fresh, *argv)
        assert status.returncode == 0, status.stderr
        assert argv[1] in status.stdout and "finished (18/18 rows)" in status.stdout
    finally:
        stopped = run_command([stop_script], env)
    assert stopped.returncode == 0, stopped.stderr
    wait_for(lambda: not any(alive(p) for p in pids), 60, "the demo's processes to stop")
    assert not Path(stop_script).exists()


def test_the_bare_status_line_reads_the_job_from_the_archive(kept_demo: KeptDemo) -> None:
    """A new shell with the demo's settings, whose Redis URL has nothing behind it (as once a
    run without --keep has stopped its private Redis), reads the job from the archive with
    `evalq status JOB` and nothing set in front of it: the line such a run prints."""
    _, argv = printed_status(kept_demo.output)
    later = kept_demo.env | {"HOME": str(kept_demo.folder / "elsewhere")}  # the same archive
    status = run_evalq(later, *argv)
    assert status.returncode == 0, status.stderr
    assert "finished (18/18 rows)" in status.stdout
    assert "read from the archive" in " ".join(status.stderr.split())
