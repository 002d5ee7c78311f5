"""The scaling benchmark's readings, kept apart from the processes it starts so they can be
checked on their own: CPU time and memory of process trees from /proc, Redis's per-command
counts from INFO commandstats, and the latency bound a run is held against."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROC = Path("/proc")

# The line a worker logs at INFO for every task it takes, whatever the events setting.
RUN_UNIT_RECEIVED = ("evalq.run_unit[", "] received")

# Commands the benchmark itself sends to read Redis's figures: not the job's cost.
OWN_COMMANDS = frozenset({"config|resetstat", "config", "info"})


@dataclass(frozen=True)
class ProcStat:
    pid: int
    ppid: int
    cpu_ticks: int  # utime + stime, this process's threads
    reaped_ticks: int  # cutime + cstime, its children already waited for


def parse_stat(text: str) -> ProcStat:
    """One /proc/<pid>/stat line. The command name sits in parentheses and may hold spaces
    and parentheses itself, so fields are counted from the last ')'."""
    pid = int(text[: text.index("(")].strip())
    fields = text[text.rindex(")") + 2 :].split()
    # fields[0] is field 3 (state): ppid is field 4, utime..cstime fields 14..17
    ppid = int(fields[1])
    utime, stime, cutime, cstime = (int(f) for f in fields[11:15])
    return ProcStat(pid=pid, ppid=ppid, cpu_ticks=utime + stime, reaped_ticks=cutime + cstime)


def descendants(root: int, parents: Mapping[int, int]) -> set[int]:
    """The root and every process below it, given each process's parent."""
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = {root}, [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def read_stats(proc: Path = PROC) -> dict[int, ProcStat]:
    found = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            found[int(entry.name)] = parse_stat((entry / "stat").read_text())
        except (OSError, ValueError):
            continue  # it exited while we looked
    return found


def tree_pids(root: int, proc: Path = PROC) -> set[int]:
    stats = read_stats(proc)
    return descendants(root, {pid: s.ppid for pid, s in stats.items()}) & stats.keys()


def tree_cpu_s(root: int, proc: Path = PROC) -> float:
    """CPU seconds used so far by a process and all its descendants, live or reaped:
    utime+stime of every process in the tree, plus the root's cutime+cstime, so a child reaped
    during the run still counts."""
    stats = read_stats(proc)
    tree = descendants(root, {pid: s.ppid for pid, s in stats.items()})
    ticks = sum(stats[pid].cpu_ticks for pid in tree if pid in stats)
    ticks += stats[root].reaped_ticks if root in stats else 0
    return ticks / os.sysconf("SC_CLK_TCK")


def status_kb(text: str, field: str) -> int:
    """A `Field:   123 kB` value of /proc/<pid>/status (0 when absent, e.g. a zombie)."""
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name == field:
            return int(value.split()[0])
    return 0


def tree_memory_mb(root: int, proc: Path = PROC) -> dict[str, float]:
    """Memory of a process tree: `rss_end_mb`, the resident set now, and `rss_peak_mb`, each
    process's high-water mark (VmHWM) summed: an upper bound on the tree's peak."""
    end = peak = 0
    for pid in tree_pids(root, proc):
        try:
            text = (proc / str(pid) / "status").read_text()
        except OSError:
            continue
        end += status_kb(text, "VmRSS")
        peak += status_kb(text, "VmHWM")
    return {"rss_end_mb": round(end / 1024, 1), "rss_peak_mb": round(peak / 1024, 1)}


def command_counts(commandstats: Mapping[str, Any]) -> dict[str, int]:
    """{command: calls} from INFO commandstats as redis-py returns it ({"cmdstat_get":
    {"calls": 3, ...}}) or as raw "calls=3,usec=..." strings; the benchmark's own reading
    commands are left out."""
    counts = {}
    for key, value in commandstats.items():
        name = key.removeprefix("cmdstat_")
        if name in OWN_COMMANDS:
            continue
        fields = (
            dict(p.split("=", 1) for p in value.split(",")) if isinstance(value, str) else value
        )
        counts[name] = int(fields["calls"])
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def bound_s(stages: Iterable[int], latency_s: float, slots: int) -> float:
    """The ideal wall time of a job: each stage's calls (rubrics before the validators of the
    same rows, say) run `slots` at a time, each taking exactly the latency, and nothing else
    costs time; a stage starts when the one before it ends."""
    return sum(math.ceil(calls / slots) * latency_s for calls in stages if calls > 0)


def per_call_ms(seconds: float, calls: int) -> float | None:
    return round(seconds * 1000 / calls, 3) if calls else None


def ratio(numerator: float | None, denominator: float | None, digits: int = 3) -> float | None:
    if numerator is None or not denominator:
        return None
    return round(numerator / denominator, digits)


def scaling(calls_per_s: Mapping[int, float]) -> dict[int, float | None]:
    """Per worker count W, the throughput over W times the smallest count's throughput per
    worker: 1.0 is linear."""
    if not calls_per_s:
        return {}
    base = min(calls_per_s)
    per_worker = calls_per_s[base] / base
    return {w: ratio(rate, w * per_worker) for w, rate in sorted(calls_per_s.items())}


def banner_value(log: str, label: str) -> str | None:
    """A value from Celery's start-up banner (".> concurrency: 16 (thread)", "task events:
    OFF ..."): the last banner in the log, so a restarted worker reports its last start."""
    found = None
    for line in log.splitlines():
        head, sep, value = line.partition(f"{label}:")
        if sep and head.strip(" .>-*") == "":
            found = value.strip()
    return found


def banner_setting(name: str, value: str | None) -> str | None:
    """A banner value as the benchmark's options spell it: "16 (thread)" is the threads pool,
    "OFF (enable -E to monitor tasks in this worker)" is task events off."""
    if value is None:
        return None
    if name == "pool":
        inner = value.partition("(")[2].partition(")")[0]
        return {"thread": "threads", "prefork": "prefork"}.get(inner, inner)
    words = value.split()
    return words[0].lower() if words else None


def not_in_force(asked: Mapping[str, str], seen: Mapping[str, list[str | None]]) -> list[str]:
    """Where a worker's banner shows a setting other than the one asked for."""
    return [
        f"worker {i}: asked {name} {asked[name]}, its banner says {value}"
        for name, values in seen.items()
        for i, value in enumerate(values)
        if banner_setting(name, value) != asked[name]
    ]


def units_received(log: str) -> int:
    """run_unit tasks the workers took, from their logs."""
    return sum(all(part in line for part in RUN_UNIT_RECEIVED) for line in log.splitlines())
