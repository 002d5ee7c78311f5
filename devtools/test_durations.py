"""Keep tests/durations.json, the seconds each test took, so the test command can start the
longest tests first (tests/support/ordering.py). `./scripts/test` calls this after a whole run
with the JUnit report it had pytest write."""

from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from collections.abc import Collection, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "durations.json"
# A test the file does not name is guessed by kind (tests/support/ordering.py): these are
# always kept, however quick.
ALWAYS_KEPT = "tests/integration/"


def node_id(classname: str, name: str) -> str:
    """A pytest node id from a JUnit testcase: ``tests.unit.test_x`` and ``test_y[a]`` give
    ``tests/unit/test_x.py::test_y[a]`` (a class after the module: ``::TestY::test_y``); the
    ``@group`` that ``--dist loadgroup`` adds to a test's id is dropped, with the ``]`` pytest
    9.2's report writes after it on a parametrized test (``test_y[a]@group]``)."""
    parts = classname.split(".")
    classes: list[str] = []
    while parts and not parts[-1].startswith("test_"):
        classes.insert(0, parts.pop())
    base, at, group = name.rpartition("@")
    if at and ("]" not in group or (base.endswith("]") and group.find("]") == len(group) - 1)):
        name = base
    return "::".join(["/".join(parts) + ".py", *classes, name])


def passed(report: Path) -> dict[str, float]:
    """The seconds (setup, call and teardown) of each test the report shows passing. A test
    with a failure, an error (its teardown's included) or a skip in any of its entries is left
    out: its time says nothing about its next run."""
    seconds: dict[str, float] = {}
    spoilt: set[str] = set()
    for case in ET.parse(report).getroot().iter("testcase"):
        key = node_id(case.get("classname") or "", case.get("name") or "")
        seconds[key] = seconds.get(key, 0.0) + float(case.get("time") or 0)
        if any(child.tag in ("failure", "error", "skipped") for child in case):
            spoilt.add(key)
    return {k: v for k, v in seconds.items() if k not in spoilt}


def reported(report: Path) -> set[str]:
    """Every test the report names, whatever its outcome."""
    cases = ET.parse(report).getroot().iter("testcase")
    return {node_id(c.get("classname") or "", c.get("name") or "") for c in cases}


def merged(
    old: Mapping[str, float],
    measured: Mapping[str, float],
    min_s: float,
    root: Path = ROOT,
    seen: Collection[str] = (),
) -> dict[str, float]:
    """`old` with the `measured` figures in, sorted by test id: a test that passed gets its new
    figure, one that failed, was skipped or did not run keeps the one it had, and a test whose
    file is gone, or whose file ran (in `seen`) without it (renamed), is dropped. A unit test under `min_s` is left out (guessed by kind, close
    enough); an integration test is kept whatever it took, since a quick one guessed at the
    integration default would be far off. Figures are rounded to a tenth of a second so the
    file changes little from run to run."""
    ran = {test.split("::", 1)[0] for test in seen}
    out = {
        k: v
        for k, v in old.items()
        if (root / k.split("::", 1)[0]).exists() and (k in seen or k.split("::", 1)[0] not in ran)
    }
    for test, seconds in measured.items():
        if seconds >= min_s or test.startswith(ALWAYS_KEPT):
            out[test] = round(seconds, 1)
        else:
            out.pop(test, None)
    return dict(sorted(out.items()))


def main() -> None:
    """By hand:

        pytest -n 3 --dist loadgroup --no-loadscope-reorder --junitxml=/tmp/report.xml
        python -m devtools.test_durations /tmp/report.xml

    A missing or unreadable report changes nothing and is no error: the run's own result is
    what counts."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, help="a JUnit XML report of a run")
    parser.add_argument(
        "--min-s", type=float, default=1.0, help="keep unit tests this long or more"
    )
    parser.add_argument("--out", type=Path, default=OUT, help="the durations file (JSON)")
    args = parser.parse_args()
    try:
        measured, seen = passed(args.report), reported(args.report)
    except (OSError, ET.ParseError) as exc:
        print(f"{args.out.name} left as it was: no readable report ({exc})", file=sys.stderr)
        return
    old = json.loads(args.out.read_text()) if args.out.exists() else {}
    new = merged({str(k): float(v) for k, v in old.items()}, measured, args.min_s, seen=seen)
    if new == old:
        print(f"{args.out.name}: unchanged ({len(measured)} passing tests read)")
        return
    args.out.write_text(json.dumps(new, indent=1) + "\n")
    changed = sum(1 for k in new.keys() | old.keys() if new.get(k) != old.get(k))
    print(
        f"{args.out.name}: {changed} figures changed from {len(measured)} passing tests; "
        f"{len(new)} tests, {sum(new.values()):.0f} s in all (commit it with your change)"
    )


if __name__ == "__main__":
    main()
