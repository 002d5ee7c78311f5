"""The `evalq` command run as a user runs it: a child process started from the checkout's root
with the environment the test gives it, its output captured as text.

Integration tests drive the real CLI rather than calling its functions, so that argument
parsing, exit codes and what reaches stdout and stderr are what is tested. One helper keeps the
way the process is started (and its safety timeout) the same in every test. `scrape_metrics`
reads the Prometheus exporter the same way: the `evalq metrics` command, started and stopped."""

from __future__ import annotations

import os
import subprocess
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from devtools.local import EVALQ, ROOT, free_port, stop, wait_for

# A cap so a hung child fails its test instead of the whole run; not a timing expectation.
TIMEOUT_S = 180


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


def evalq_stdout(env: Mapping[str, str], *args: str) -> str:
    """The stdout of `evalq ARGS…`, which must succeed; a failure shows its stderr."""
    done = run_evalq(env, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


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
