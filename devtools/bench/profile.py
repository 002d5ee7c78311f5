"""py-spy profiles of the scaling benchmark's workers (`scripts/bench --scale --profile DIR`):
recorded during the measured run, read back as the share of a worker's samples spent in each
component of a judge call's path."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RATE_HZ = 200
ATTACH_TIMEOUT_S = 60.0
WRITE_TIMEOUT_S = 120.0
SAMPLING = "Sampling process"  # what py-spy prints once it is attached and sampling
WROTE = re.compile(r"Samples: (\d+) Errors: (\d+)")


@dataclass(frozen=True)
class Frame:
    function: (
        str  # as py-spy prints it: the code object's qualified name, "VerdictsStore.record_unit"
    )
    file: str  # shortened by py-spy to the path under its sys.path entry: "pydantic/main.py"


@dataclass(frozen=True)
class Component:
    key: str  # the JSON key and the table's row
    marker: str  # the marker as the table names it
    matches: Callable[[Frame], bool]


def function_is(name: str) -> Callable[[Frame], bool]:
    return lambda frame: frame.function == name


def function_starts(prefix: str) -> Callable[[Frame], bool]:
    return lambda frame: frame.function.startswith(prefix)


def file_in(*packages: str) -> Callable[[Frame], bool]:
    """A frame from a package's own files, however py-spy shortened the path (site-packages
    paths are shown from the package's folder down)."""
    folders = tuple(f"{p}/" for p in packages)
    return lambda frame: (
        frame.file.startswith(folders) or any(f"/{f}" in frame.file for f in folders)
    )


# The components a judge call's path passes through, by the function that marks each one.
_MARKER_FUNCTIONS = {
    "judge_call": "GeminiJudge._call_once",
    "task_events": "EventDispatcher.send",
    "result_and_chord": "Backend.mark_as_done",
    "acks": "Request.acknowledge",
    "unacked_bookkeeping": "QoS.append",
    "chord_send": "_chord.run",
    "broker_receive": "Transport.drain_events",
    "store_writes": "VerdictsStore.record_unit",
    "prepare_row": "prepare_row",
    "aggregate_row": "aggregate_row",
}
COMPONENTS: tuple[Component, ...] = (
    *(Component(name, f, function_is(f)) for name, f in _MARKER_FUNCTIONS.items()),
    Component("logging", "Logger.*", function_starts("Logger.")),
    Component("call_digest", "call_digest", function_is("call_digest")),
    Component("pydantic", "pydantic[_core]/ files", file_in("pydantic", "pydantic_core")),
)


def parse_frame(text: str) -> Frame:
    """`function (file:line)`; py-spy leaves the line out where it has none, and a function
    name may hold spaces and parentheses of its own ("<lambda>", "<genexpr>")."""
    function, sep, where = text.rpartition(" (")
    if not sep or not where.endswith(")"):
        return Frame(text, "")
    where = where[:-1]
    file, colon, line = where.rpartition(":")
    return Frame(function, file if colon and line.isdigit() else where)


def parse_raw(text: str) -> list[tuple[tuple[Frame, ...], int]]:
    """Every stack of a raw profile with its sample count: py-spy's "collapsed stack" format,
    one line per distinct stack, frames root first joined by ';', then a space and the count.
    A stack may be empty (" 17": a thread caught with no Python frame), and its samples still
    count in the worker's total."""
    stacks = []
    for line in text.splitlines():
        stack, _, count = line.rstrip().rpartition(" ")
        if not count.isdigit():
            continue  # blank
        frames = tuple(parse_frame(f) for f in stack.split(";")) if stack else ()
        stacks.append((frames, int(count)))
    return stacks


def share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def summarize(
    text: str, calls: int, components: Iterable[Component] = COMPONENTS
) -> dict[str, Any]:
    """One worker's profile: its samples, samples per judge call (over all the run's calls,
    as a worker's share of the work is not known), and each component's inclusive share: a
    sample counts for a component when its stack holds the marker frame anywhere, so a Store
    write under a task's frames counts for both, and shares do not sum to 1."""
    stacks = parse_raw(text)
    total = sum(count for _, count in stacks)
    found = {
        c.key: sum(count for frames, count in stacks if any(c.matches(f) for f in frames))
        for c in components
    }
    return {
        "samples": total,
        "samples_per_call": round(total / calls, 2) if calls else None,
        "shares": {key: share(n, total) for key, n in found.items()},
    }


def table(columns: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Rows of components, a column per profiled worker (summaries as `summarize` gives)."""
    names = list(columns)
    width = max([9, *(len(n) for n in names)])
    label = max(len(f"{c.key} ({c.marker})") for c in COMPONENTS)

    def row(head: str, cells: Iterable[Any]) -> str:
        return f"{head:<{label}} " + " ".join(f"{'-' if v is None else v:>{width}}" for v in cells)

    lines = [row("component (marker frame)", names)]
    for c in COMPONENTS:
        lines.append(row(f"{c.key} ({c.marker})", (columns[n]["shares"][c.key] for n in names)))
    lines.append(row("samples", (columns[n]["samples"] for n in names)))
    lines.append(row("samples per judge call", (columns[n]["samples_per_call"] for n in names)))
    errors = (columns[n].get("py_spy", {}).get("errors") for n in names)
    lines.append(row("py-spy errors (samples lost)", errors))
    return lines


def py_spy() -> str:
    """py-spy beside this Python (the venv's bin) or on PATH."""
    beside = Path(sys.executable).parent / "py-spy"
    found = str(beside) if os.access(beside, os.X_OK) else shutil.which("py-spy")
    if found is None:
        raise SystemExit(
            "--profile needs py-spy (pip install 'py-spy>=0.3', in the dev extras): "
            f"not found beside {sys.executable} nor on PATH"
        )
    return found


@dataclass
class Recording:
    """py-spy attached to one process, writing its raw profile when stopped."""

    pid: int
    out: Path
    proc: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    _reader: threading.Thread | None = None

    def output(self) -> str:
        return "".join(self.lines)[-3000:]

    def fail(self, what: str) -> SystemExit:
        return SystemExit(
            f"py-spy {what} (pid {self.pid}, {self.out}); it said:\n{self.output()}\n"
            "(py-spy needs ptrace on the worker: root, or CAP_SYS_PTRACE in a container, "
            "or kernel.yama.ptrace_scope 0)"
        )


def start(pid: int, out: Path, executable: str) -> Recording:
    """py-spy on `pid`, returned once it says it samples (it attaches before saying so), so the
    run that follows is covered from its start; a py-spy that exits instead fails loudly.

    `--nonblocking` reads stacks while the worker runs (never pausing it; reads that tear are
    py-spy's "errors", counted apart), and without `--idle` a sample counts only where the
    thread was running or runnable. Runnable counts: where cores are short, a worker waiting
    for a CPU is sampled where it stopped, so samples can add up to more than its CPU time
    (about twice at load 4.5 on 2 cores; about equal at load 2.5)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    cmd = [executable, "record", "-p", str(pid), "-r", str(RATE_HZ), "-f", "raw"]
    proc = subprocess.Popen(
        [*cmd, "-o", str(out), "--nonblocking"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    rec = Recording(pid, out, proc)
    sampling = threading.Event()

    def read() -> None:  # drains py-spy's output all along, so its pipe never fills
        assert proc.stdout is not None
        for line in proc.stdout:
            rec.lines.append(line)
            if SAMPLING in line:
                sampling.set()
        sampling.set()  # EOF: it exited

    rec._reader = threading.Thread(target=read, daemon=True)
    rec._reader.start()
    if not sampling.wait(ATTACH_TIMEOUT_S):
        proc.kill()
        proc.wait()
        raise rec.fail(f"did not start sampling within {ATTACH_TIMEOUT_S:.0f} s")
    if not any(SAMPLING in line for line in rec.lines):
        proc.wait()
        raise rec.fail(f"exited with {proc.returncode} instead of sampling")
    return rec


def interrupt(rec: Recording) -> None:
    """SIGINT, as Control-C: py-spy stops sampling and writes its file."""
    if rec.proc.poll() is None:
        rec.proc.send_signal(signal.SIGINT)


def finish(rec: Recording) -> dict[str, int]:
    """Waits for an interrupted py-spy to write its file; the samples and errors it counted."""
    try:
        rec.proc.wait(WRITE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        rec.proc.kill()
        rec.proc.wait()
        raise rec.fail(f"did not write its profile within {WRITE_TIMEOUT_S:.0f} s") from None
    if rec._reader is not None:
        rec._reader.join(10)
    if rec.proc.returncode != 0 or not rec.out.exists():
        raise rec.fail(f"exited with {rec.proc.returncode}, profile written: {rec.out.exists()}")
    said = WROTE.search(rec.output())
    return {"samples": int(said[1]), "errors": int(said[2])} if said else {}


def record_all(pids: Iterable[int], folder: Path, run: str) -> list[Recording]:
    """One py-spy per worker process, `<run>-worker<N>.txt`; if one fails, those already
    started are stopped before the failure is raised."""
    executable = py_spy()
    started: list[Recording] = []
    try:
        for n, pid in enumerate(pids):
            started.append(start(pid, folder / f"{run}-worker{n}.txt", executable))
    except BaseException:
        abandon(started)
        raise
    return started


def abandon(recordings: Iterable[Recording]) -> None:
    """py-spy processes killed without their files: the run they watched failed."""
    for rec in recordings:
        if rec.proc.poll() is None:
            rec.proc.kill()
        rec.proc.wait()


def stop_all(recordings: Sequence[Recording], calls: int) -> dict[str, Any]:
    """Stop every py-spy at once, wait for all their files, then each worker's summary."""
    for rec in recordings:
        interrupt(rec)
    try:
        said = [finish(rec) for rec in recordings]
    except BaseException:
        abandon(recordings)
        raise
    workers = []
    for rec, counted in zip(recordings, said, strict=True):
        summary = summarize(rec.out.read_text(errors="replace"), calls)
        workers.append({"file": str(rec.out), "pid": rec.pid, "py_spy": counted, **summary})
    return {
        "rate_hz": RATE_HZ,
        "idle_samples": False,
        "inclusive": True,
        "markers": {c.key: c.marker for c in COMPONENTS},
        "workers": workers,
    }
