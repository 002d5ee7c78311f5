"""Write tests/durations.json from a JUnit XML report of a whole run, so the test command can
start the longest tests first (tests/support/ordering.py). Run after a full suite:

    ./scripts/test --junitxml=/tmp/report.xml
    python -m devtools.test_durations /tmp/report.xml

Only tests of at least ``--min-s`` are kept (the rest are guessed by kind), rounded to a tenth
of a second so the file changes little from run to run."""

from __future__ import annotations

import argparse
import json
import xml.etree.ElementTree as ET
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "durations.json"


def node_id(classname: str, name: str) -> str:
    """A pytest node id from a JUnit testcase: ``tests.unit.test_x`` and ``test_y[a]`` give
    ``tests/unit/test_x.py::test_y[a]`` (a class after the module: ``::TestY::test_y``); the
    ``@group`` that ``--dist loadgroup`` adds to a test's id is dropped."""
    parts = classname.split(".")
    classes: list[str] = []
    while parts and not parts[-1].startswith("test_"):
        classes.insert(0, parts.pop())
    base, at, group = name.rpartition("@")
    if at and "]" not in group:
        name = base
    return "::".join(["/".join(parts) + ".py", *classes, name])


def durations(report: Path, min_s: float) -> dict[str, float]:
    found: dict[str, float] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        seconds = float(case.get("time") or 0)
        if seconds >= min_s:
            key = node_id(case.get("classname") or "", case.get("name") or "")
            found[key] = round(found.get(key, 0.0) + seconds, 1)
    return dict(sorted(found.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, help="a JUnit XML report of a whole run")
    parser.add_argument("--min-s", type=float, default=1.0, help="keep tests this long or more")
    args = parser.parse_args()
    measured = durations(args.report, args.min_s)
    OUT.write_text(json.dumps(measured, indent=1) + "\n")
    print(f"{OUT}: {len(measured)} tests, {sum(measured.values()):.0f} s in all")


if __name__ == "__main__":
    main()
