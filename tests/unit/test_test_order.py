"""The suite's order (tests.support.ordering) and the durations file it reads
(devtools.test_durations): longest first, a module sharing a fixture kept together, and
list scheduling that way ends sooner than in file order."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from devtools.test_durations import durations, node_id
from tests.support.ordering import (
    GUESS_INTEGRATION_S,
    GUESS_UNIT_S,
    finish_s,
    guess_s,
    load_durations,
    longest_first,
)

MEASURED = {"t/a.py::slow": 100.0, "t/a.py::quick": 1.0, "t/b.py::mid": 30.0, "t/c.py::x": 20.0}


def test_units_go_longest_first_and_a_shared_module_stays_whole() -> None:
    items = ["t/a.py::quick", "t/b.py::mid", "t/a.py::slow", "t/c.py::x", "t/c.py::y"]
    group = {"t/c.py::x": "t/c.py", "t/c.py::y": "t/c.py"}
    units = longest_first(items, str, group.get, {**MEASURED, "t/c.py::y": 15.0})
    assert [u.name for u in units] == [
        "test:t/a.py::slow",
        "t/c.py",
        "test:t/b.py::mid",
        "test:t/a.py::quick",
    ]
    assert units[1].members == (3, 4) and units[1].seconds == 35.0


def test_longest_first_ends_sooner_than_file_order() -> None:
    # File order put the long tests last, where one process ran them in a row.
    items = [f"t/u.py::u{i}" for i in range(30)] + ["t/z.py::long1", "t/z.py::long2"]
    measured = {f"t/u.py::u{i}": 2.0 for i in range(30)} | {
        "t/z.py::long1": 40.0,
        "t/z.py::long2": 40.0,
    }
    in_file_order = longest_first(items, str, lambda _: None, {})  # all guessed alike: file order
    by_length = longest_first(items, str, lambda _: None, measured)
    as_filed = [u.__class__(u.name, u.members, measured[u.name[5:]]) for u in in_file_order]
    assert finish_s(by_length, 3) == 48.0 < finish_s(as_filed, 3) == 60.0


def test_a_test_the_file_does_not_name_is_guessed_by_kind(tmp_path: Path) -> None:
    assert guess_s("tests/integration/test_x.py::t", {}) == GUESS_INTEGRATION_S
    assert guess_s("tests/unit/test_x.py::t", {}) == GUESS_UNIT_S
    assert load_durations(tmp_path / "missing.json") == {}


def test_junit_cases_become_node_ids_without_their_group(tmp_path: Path) -> None:
    assert node_id("tests.unit.test_x", "test_y[a@b]") == "tests/unit/test_x.py::test_y[a@b]"
    assert node_id("tests.unit.test_x.TestY", "test_z") == "tests/unit/test_x.py::TestY::test_z"
    grouped = node_id("tests.integration.test_r", "test_o[e]@tests/integration/test_r.py")
    assert grouped == "tests/integration/test_r.py::test_o[e]"
    report = ET.Element("testsuites")
    suite = ET.SubElement(report, "testsuite")
    for name, seconds in [("slow", "12.34"), ("fast", "0.2")]:
        ET.SubElement(suite, "testcase", classname="tests.unit.test_x", name=name, time=seconds)
    path = tmp_path / "report.xml"
    ET.ElementTree(report).write(path)
    assert durations(path, min_s=1.0) == {"tests/unit/test_x.py::slow": 12.3}


def test_the_durations_file_names_tests_that_exist() -> None:
    """A renamed test leaves a stale line: harmless to results, but the file says so."""
    from tests.conftest import ROOT

    for test in load_durations():
        path = test.split("::", 1)[0]
        assert (ROOT / path).exists(), f"tests/durations.json names {test}, whose file is gone"
