"""The flaky-test hunt (devtools/flaky_hunt.py) runs each test in a pytest of its own while
busy loops hold the cores, and says which runs failed with what they printed: a hunt that
reported a failing test as passing would hide exactly what it is for."""

from __future__ import annotations

from pathlib import Path

from devtools.flaky_hunt import busy_cores, run_once, table


def test_a_passing_and_a_failing_test_are_told_apart_under_busy_cores(tmp_path: Path) -> None:
    tests = tmp_path / "test_two.py"
    tests.write_text(
        "def test_fine():\n    assert True\n\n"
        "def test_broken():\n    assert 1 == 2, 'BROKEN ON PURPOSE'\n",
        encoding="utf-8",
    )
    with busy_cores(1):
        fine = run_once(f"{tests}::test_fine", 1, timeout_s=120)
        broken = run_once(f"{tests}::test_broken", 1, timeout_s=120)
    assert fine.passed and not broken.passed
    assert "BROKEN ON PURPOSE" in broken.tail
    report = table([fine, broken], burners=1)
    assert "2 runs with 1 busy loops" in report and "1 failed" in report
    assert f"### {tests}::test_broken, run 1" in report


def test_a_run_that_never_ends_is_a_failure_not_a_hang(tmp_path: Path) -> None:
    tests = tmp_path / "test_hang.py"
    tests.write_text("import time\n\ndef test_hang():\n    time.sleep(600)\n", encoding="utf-8")
    hung = run_once(str(tests), 1, timeout_s=1)
    assert not hung.passed and "no end after 1 s" in hung.tail
