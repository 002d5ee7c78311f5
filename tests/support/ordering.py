"""The order the suite runs in: longest first, so that three test processes finish together.

The test command runs pytest-xdist with ``--dist loadgroup``: each process takes the next unit
of work from the front of one queue as it frees up, which is list scheduling, and list
scheduling longest-first ends close to the total work over the processes. Collected in file
order instead, the suite's longest tests (kills, Redis freezes, restarts) sat together near
the end and one process ran them in a row while the others had finished.

A unit is one test, or every test of a module whose tests share a module-scoped fixture (a
stack, an emulator, a corpus run once): those stay on one process, so that fixture is built
once (the ``xdist_group`` mark, tests/conftest.py). The test command passes
``--no-loadscope-reorder``, or xdist would start the units with the most tests first. How long
each test takes comes from ``tests/durations.json``, which each whole run of the test command
updates from its JUnit report (devtools/test_durations.py); a test it does not name is guessed
by its kind, and an unknown test only costs the balance, never a result."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

DURATIONS_FILE = Path(__file__).resolve().parents[1] / "durations.json"
# Guesses for tests durations.json does not name: an integration test starts processes.
GUESS_INTEGRATION_S = 8.0
GUESS_UNIT_S = 0.05

T = TypeVar("T")


@dataclass(frozen=True)
class Unit:
    """What one process runs at once: a test, or a module's tests sharing a fixture."""

    name: str
    members: tuple[int, ...]  # indexes into the collected items
    seconds: float


def load_durations(path: Path = DURATIONS_FILE) -> dict[str, float]:
    """The measured seconds per test id; none when the file is missing."""
    if not path.exists():
        return {}
    return {str(k): float(v) for k, v in json.loads(path.read_text()).items()}


def guess_s(test_id: str, durations: Mapping[str, float]) -> float:
    if test_id in durations:
        return durations[test_id]
    return GUESS_INTEGRATION_S if test_id.startswith("tests/integration/") else GUESS_UNIT_S


def longest_first(
    items: Sequence[T],
    test_id: Callable[[T], str],
    group_of: Callable[[T], str | None],
    durations: Mapping[str, float],
) -> list[Unit]:
    """The units of `items`, longest first; ties keep collection order. `group_of` names the
    group an item runs in with others, or None for one that runs alone."""
    names: list[str] = []
    members: dict[str, list[int]] = {}
    seconds: dict[str, float] = {}
    for index, item in enumerate(items):
        name = group_of(item) or f"test:{test_id(item)}"
        if name not in members:
            names.append(name)
            members[name] = []
            seconds[name] = 0.0
        members[name].append(index)
        seconds[name] += guess_s(test_id(item), durations)
    order = sorted(range(len(names)), key=lambda i: (-seconds[names[i]], i))
    return [Unit(names[i], tuple(members[names[i]]), seconds[names[i]]) for i in order]


def finish_s(units: Sequence[Unit], processes: int) -> float:
    """When the last of `processes` ends, each taking the next unit as it frees up."""
    ends = [0.0] * max(1, processes)
    for unit in units:
        at = ends.index(min(ends))
        ends[at] += unit.seconds
    return max(ends)
