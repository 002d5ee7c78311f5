"""The suite's order (tests.support.ordering), the durations file it reads
(devtools.test_durations, merged from each whole run's report), and the test command that keeps
both: longest first, a module sharing a fixture kept together, and list scheduling that way ends
sooner than in file order."""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from devtools import test_durations
from devtools.test_durations import merged, node_id, passed, reported
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


def test_junit_cases_become_node_ids_without_their_group() -> None:
    assert node_id("tests.unit.test_x", "test_y[a@b]") == "tests/unit/test_x.py::test_y[a@b]"
    assert node_id("tests.unit.test_x.TestY", "test_z") == "tests/unit/test_x.py::TestY::test_z"
    grouped = node_id("tests.integration.test_r", "test_o[e]@tests/integration/test_r.py")
    assert grouped == "tests/integration/test_r.py::test_o[e]"
    closed_again = node_id("tests.integration.test_r", "test_o[e]@tests/integration/test_r.py]")
    assert closed_again == "tests/integration/test_r.py::test_o[e]"
    plain = node_id("tests.integration.test_r", "test_p@tests/integration/test_r.py")
    assert plain == "tests/integration/test_r.py::test_p"


def test_a_report_is_merged_for_the_tests_that_passed_and_the_rest_keep_theirs(
    tmp_path: Path,
) -> None:
    report = ET.Element("testsuites")
    suite = ET.SubElement(report, "testsuite")
    cases = [
        ("tests.unit.test_x", "slow", "12.34", None),
        ("tests.unit.test_x", "now_quick", "0.2", None),  # was slow: back to the guess
        ("tests.unit.test_x", "failing", "30", "failure"),
        ("tests.unit.test_x", "skipped", "0", "skipped"),
        ("tests.integration.test_i", "quick@tests/integration/test_i.py", "0.04", None),
        ("tests.integration.test_i", "torn@tests/integration/test_i.py", "9", None),
        ("tests.integration.test_i", "torn@tests/integration/test_i.py", "1", "error"),
    ]
    for classname, name, seconds, outcome in cases:
        case = ET.SubElement(suite, "testcase", classname=classname, name=name, time=seconds)
        if outcome:
            ET.SubElement(case, outcome, message="x")
    path = tmp_path / "report.xml"
    ET.ElementTree(report).write(path)
    measured = passed(path)
    assert measured == {
        "tests/unit/test_x.py::slow": 12.34,
        "tests/unit/test_x.py::now_quick": 0.2,
        "tests/integration/test_i.py::quick": 0.04,
    }
    for folder in ("tests/unit", "tests/integration"):
        (tmp_path / folder).mkdir(parents=True)
    for name in ("test_x.py", "test_y.py"):
        (tmp_path / "tests/unit" / name).touch()
    (tmp_path / "tests/integration/test_i.py").touch()
    old = {
        "tests/unit/test_x.py::slow": 3.0,
        "tests/unit/test_x.py::now_quick": 5.0,
        "tests/unit/test_x.py::failing": 2.0,  # kept: a failure's time says nothing
        "tests/unit/test_y.py::not_run": 4.0,  # kept: not in this report
        "tests/unit/test_gone.py::t": 1.5,  # its file is gone
        "tests/unit/test_x.py::renamed": 6.0,  # its file ran without it
    }
    assert merged(old, measured, min_s=1.0, root=tmp_path, seen=reported(path)) == {
        "tests/integration/test_i.py::quick": 0.0,  # kept: guessed, it would count 8 s
        "tests/unit/test_x.py::failing": 2.0,
        "tests/unit/test_x.py::slow": 12.3,
        "tests/unit/test_y.py::not_run": 4.0,
    }


def test_the_test_command_merges_its_report_and_a_missing_one_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.conftest import ROOT

    out = tmp_path / "durations.json"
    out.write_text('{"tests/unit/test_test_order.py::x": 2.0}\n')
    argv = ["test_durations", str(tmp_path / "none.xml"), "--out", str(out)]
    monkeypatch.setattr(sys, "argv", argv)
    test_durations.main()  # no exception: the command's status is the run's
    assert "left as it was" in capsys.readouterr().err
    assert out.read_text() == '{"tests/unit/test_test_order.py::x": 2.0}\n'
    script = (ROOT / "scripts" / "test").read_text()
    assert '--junitxml="$REPORT"' in script
    assert 'python -m devtools.test_durations "$REPORT" ||' in script


def test_every_pytest_run_of_the_test_command_keeps_the_order() -> None:
    """loadgroup keeps a shared module on one process; --no-loadscope-reorder keeps the units in
    the order collected, longest first, where xdist would put the units with most tests first."""
    from tests.conftest import ROOT

    script = (ROOT / "scripts" / "test").read_text()
    runs = [
        line
        for line in script.splitlines()
        if re.match(r"\s*(exec\s+)?pytest\s", line) and not line.lstrip().startswith("#")
    ]
    assert len(runs) == 2, runs  # the whole suite, and --fast
    for line in runs:
        assert "--dist loadgroup" in line and "--no-loadscope-reorder" in line, line


def test_the_durations_file_names_tests_that_exist() -> None:
    """A renamed test leaves a stale line: harmless to results, but the file says so."""
    from tests.conftest import ROOT

    for test in load_durations():
        path = test.split("::", 1)[0]
        assert (ROOT / path).exists(), f"tests/durations.json names {test}, whose file is gone"
