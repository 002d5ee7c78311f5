"""The `evalq` command run as a user runs it: a child process started from the checkout's root
with the environment the test gives it, its output captured as text.

Integration tests drive the real CLI rather than calling its functions, so that argument
parsing, exit codes and what reaches stdout and stderr are what is tested. One helper keeps the
way the process is started (and its safety timeout) the same in every test. `scrape_metrics`
reads the Prometheus exporter the same way: the `evalq metrics` command, started and stopped."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from devtools.local import EVALQ, ROOT, free_port, stop, wait_for
from evalq.client.cli import exit_codes

# A cap so a hung child fails its test instead of the whole run; not a timing expectation.
TIMEOUT_S = 180
# The same cap for a command that waits on whole jobs (`run --wait`, `compare` of fresh runs).
LONG_TIMEOUT_S = 300


def bare_env() -> dict[str, str]:
    """Only what starting evalq needs: no EVALQ_ setting leaks in from the caller's
    environment, so the command sees exactly the options the test passes; and the tests'
    data folder, where its default archive lives."""
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    if data_home := os.environ.get("XDG_DATA_HOME"):  # the tests' own (tests/conftest.py)
        env["XDG_DATA_HOME"] = data_home
    return env


def run_command(
    argv: Sequence[str], env: Mapping[str, str], *, cwd: Path = ROOT, timeout_s: float = TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    """Any command, finished; its exit code is the caller's to check."""
    return subprocess.run(
        list(argv),
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


def run_evalq(
    env: Mapping[str, str], *args: str, cwd: Path = ROOT, timeout_s: float = TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    """`evalq ARGS…`, finished; its exit code is the caller's to check."""
    return run_command([*EVALQ, *args], env, cwd=cwd, timeout_s=timeout_s)


def evalq_ok(
    env: Mapping[str, str], *args: str, timeout_s: float = TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    """`evalq ARGS…`, which must succeed; a failure shows what it printed."""
    done = run_evalq(env, *args, timeout_s=timeout_s)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def evalq_long_ok(env: Mapping[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """evalq_ok with the cap of a command that waits on whole jobs (LONG_TIMEOUT_S)."""
    return evalq_ok(env, *args, timeout_s=LONG_TIMEOUT_S)


def waited_summary(env: Mapping[str, str], *args: str) -> dict[str, Any]:
    """The summary `evalq ARGS… --wait --json` prints once its job has ended; the command must
    succeed."""
    return dict(json.loads(evalq_ok(env, *args, "--wait", "--json").stdout))


def evalq_stdout(env: Mapping[str, str], *args: str) -> str:
    """The stdout of `evalq ARGS…`, which must succeed; a failure shows its stderr."""
    done = run_evalq(env, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def announced_job(said: str) -> str:
    """The job id `evalq run` (or `rank`) announces on stderr ("job 0123456789ab: ..."); the
    first, where `said` holds several lines."""
    found = re.search(r"job ([0-9a-f]{12}):", said)
    assert found, said
    return found.group(1)


def one_line_refusal(done: subprocess.CompletedProcess[str]) -> str:
    """The command was refused (exit 2) in one line on stderr, `error: …`, and printed nothing
    on stdout; that line."""
    assert done.returncode == exit_codes.ERROR, done.stdout + done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def refusal_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The lines of a refusal (exit 2) of any length, after its `error: `."""
    assert done.returncode == exit_codes.ERROR, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("error: "), done.stderr
    return [lines[0].removeprefix("error: "), *lines[1:]]


def start_evalq(env: Mapping[str, str], *args: str) -> subprocess.Popen[str]:
    """`evalq ARGS…` started and left running, its stdout and stderr piped as text: for a test
    that reads what the command says while it runs, or interrupts it."""
    return subprocess.Popen(
        [*EVALQ, *args],
        cwd=ROOT,
        env=dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def scrape_metrics(env: Mapping[str, str]) -> str:
    """One scrape of `evalq metrics` (the Prometheus exporter), started for it and stopped
    after: what a monitoring system would read for the jobs in the environment's Redis."""
    port = free_port()
    proc = subprocess.Popen(
        [*EVALQ, "metrics", "--port", str(port)],
        cwd=ROOT,
        env=dict(env),
        stdout=subprocess.PIPE,
        text=True,
    )

    def scrape() -> str:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                return str(r.read().decode())
        except OSError:
            return ""

    try:
        wait_for(lambda: bool(scrape()), 30, "the metrics endpoint")
        return scrape()
    finally:
        stop(proc)


def run_evalq_bytes(
    env: Mapping[str, str], *args: str, timeout_s: float = TIMEOUT_S
) -> subprocess.CompletedProcess[bytes]:
    """`evalq ARGS…`, finished, its stdout and stderr as the bytes it wrote: for a test of
    what reaches a terminal, byte for byte."""
    return subprocess.run(
        [*EVALQ, *args],
        cwd=ROOT,
        env=dict(env),
        capture_output=True,
        timeout=timeout_s,
        check=False,
    )


def mkdocs_build(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """`mkdocs build ARGS` with this interpreter, finished (without Material's notice of its end
    of life, which would bury a build's own warnings)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return run_command(
        [sys.executable, "-m", "mkdocs", "build", *args], env, cwd=cwd, timeout_s=240
    )
