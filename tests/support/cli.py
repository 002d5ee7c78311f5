"""The `evalq` command run as a user runs it, its output captured as text.

Integration tests drive the real CLI rather than calling its functions, so that argument
parsing, exit codes and what reaches stdout and stderr are what is tested. Where a test reads
only those, the command runs in this process (`run_evalq`, `evalq_ok`, ...): the same entry
point the installed script calls (`cli_entry`), with the environment, working folder, standard
streams and `sys.argv` a child process would have had, and evalq's per-process caches dropped
before and after. A child process costs 1.5 to 5 s of interpreter start-up and imports on a
loaded machine, and it was most of the suite's time. Where the process is the point (a signal,
what a fresh interpreter loads, a pseudo-terminal, a server left running), `run_command`,
`run_evalq_process` and `start_evalq` start a real one. `scrape_metrics` reads the Prometheus
exporter the same way: the `evalq metrics` command, started and stopped."""

from __future__ import annotations

import gc
import io
import json
import logging
import os
import re
import subprocess
import sys
import urllib.request
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

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


def run_evalq_process(
    env: Mapping[str, str], *args: str, cwd: Path = ROOT, timeout_s: float = TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    """`evalq ARGS…` in a child process of its own, finished: for a test where the process is
    the point (its exit as the shell sees it, what a fresh interpreter does)."""
    return run_command([*EVALQ, *args], env, cwd=cwd, timeout_s=timeout_s)


def run_evalq(
    env: Mapping[str, str],
    *args: str,
    cwd: Path = ROOT,
    timeout_s: float = TIMEOUT_S,
    stdin: str = "",
) -> subprocess.CompletedProcess[str]:
    """`evalq ARGS…` run in this process, finished; its exit code is the caller's to check.
    Its output reads as a child's would through `text=True` (universal newlines). A hang is
    caught by pytest-timeout here, so `timeout_s` is only kept for callers' symmetry."""
    del timeout_s
    code, out, err = invoke_evalq(env, args, cwd=cwd, stdin=stdin.encode())
    return subprocess.CompletedProcess(["evalq", *args], code, _as_text(out), _as_text(err))


def _as_text(data: bytes) -> str:
    """What `subprocess.run(..., text=True)` makes of a stream's bytes."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline=None).read()


_Action = Literal["default", "ignore"]
# Python's own warning filters, which a child process starts with (pytest replaces them).
_DEFAULT_WARNING_FILTERS: tuple[tuple[_Action, type[Warning], str | None], ...] = (
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, None),
    ("ignore", PendingDeprecationWarning, None),
    ("ignore", ImportWarning, None),
    ("ignore", ResourceWarning, None),
)


def invoke_evalq(
    env: Mapping[str, str], args: Sequence[str], *, cwd: Path = ROOT, stdin: bytes = b""
) -> tuple[int, bytes, bytes]:
    """(exit code, stdout bytes, stderr bytes) of `evalq ARGS` run by `cli_entry` in this
    process, as a child started with `env` in `cwd` would have run it."""
    from evalq.client.cli import cli_entry

    out, err = io.BytesIO(), io.BytesIO()
    code = 0
    with _as_a_child(env, cwd, ["evalq", *args]), _streams(stdin, out, err):
        try:
            cli_entry()
        except SystemExit as exc:
            code = exit_status(exc.code)
    return code, out.getvalue(), err.getvalue()


def exit_status(code: object) -> int:
    """The status a process ending with `sys.exit(code)` reports."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")
    return 1


@contextmanager
def _as_a_child(env: Mapping[str, str], cwd: Path, argv: list[str]) -> Iterator[None]:
    """This process's environment, folder and argv replaced by the child's for the command,
    evalq's per-process caches (settings, consoles, the runtime) dropped before and after, and
    Python's last-resort log handler and default warning filters in force, as in a child:
    pytest's own capture of both would hide what a user sees on stderr."""
    saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.argv = argv
    root.handlers, root.level = [], logging.WARNING
    _drop_caches()
    try:
        with warnings.catch_warnings():
            warnings.resetwarnings()
            for action, category, module in reversed(_DEFAULT_WARNING_FILTERS):
                warnings.filterwarnings(action, category=category, module=module or "")
            warnings.showwarning = _show_warning
            yield
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)
        sys.argv = saved_argv
        root.handlers, root.level = saved_handlers, saved_level
        _drop_caches()
        _collector_as_before()


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


@contextmanager
def _streams(stdin: bytes, out: io.BytesIO, err: io.BytesIO) -> Iterator[None]:
    """Standard streams over bytes, encoded as a child's are (stderr with backslashreplace);
    none is a terminal, as a child's piped streams are not."""
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(
        err, encoding="utf-8", errors="backslashreplace", write_through=True
    )
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
            stream.detach()
        sys.stdin, sys.stdout, sys.stderr = saved


def _drop_caches() -> None:
    """What evalq keeps once per process and builds from the environment: a command in a child
    builds each afresh from its own."""
    from evalq.client.cli.common import err_console, out_console
    from evalq.worker.settings import get_settings

    for cached in (get_settings, err_console, out_console):
        cached.cache_clear()
    if (runtime := sys.modules.get("evalq.worker.runtime")) is not None:
        runtime.runtime.cache_clear()


def _collector_as_before() -> None:
    """`cli_entry` pauses the garbage collector while a command loads and freezes what it
    loaded: in a test process the collector is on again afterwards, nothing left frozen."""
    from evalq.client.cli.common import _Collector

    _Collector.paused = False
    gc.unfreeze()
    gc.enable()


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
    """`evalq ARGS…` run in this process, finished, its stdout and stderr as the bytes it
    wrote: for a test of what reaches a terminal, byte for byte."""
    del timeout_s
    code, out, err = invoke_evalq(env, args)
    return subprocess.CompletedProcess(["evalq", *args], code, out, err)


def mkdocs_build(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """`mkdocs build ARGS` with this interpreter, finished (without Material's notice of its end
    of life, which would bury a build's own warnings)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return run_command(
        [sys.executable, "-m", "mkdocs", "build", *args], env, cwd=cwd, timeout_s=240
    )
