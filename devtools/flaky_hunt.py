"""Hunt tests that depend on the machine's speed: run each named test several times while
busy loops keep every core at work, and report each failure with the tail of its output."""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Tests that start processes and wait on something, each of which has failed a full run on a
# loaded machine at least once, or waits on a signal, a kill, a freeze or a restart.
DEFAULT_TESTS = (
    "tests/integration/reliability/test_turns_at_width.py",
    "tests/integration/cli/test_day_two.py::test_ctrl_c_leaves_the_job_running_and_wait_re_attaches",
    "tests/integration/reliability/test_no_worker.py",
    "tests/integration/cli/test_exit_codes.py",
    "tests/integration/reliability/test_resume_outcomes.py",
    "tests/integration/reliability/test_reliability.py::test_sigkilled_workers_lose_nothing_and_count_nothing_twice",
    "tests/integration/reliability/test_redis_outage.py",
    "tests/integration/reliability/test_broker_restart.py",
    "tests/integration/reliability/test_redis_failover.py",
    "tests/integration/reliability/test_budget_in_flight.py",
    "tests/integration/reliability/test_calls_in_flight.py",
    "tests/integration/archive/test_archive_reliability.py",
    "tests/integration/metrics/test_question_sets.py",
    "tests/unit/client/test_watch.py",
    "tests/integration/archive/test_archive_confirmed.py",
    "tests/integration/security/test_own_tasks.py",
    "tests/unit/client/test_attached.py",
)
TAIL_LINES = 25


@dataclass(frozen=True)
class Run:
    test: str
    attempt: int
    passed: bool
    seconds: float
    tail: str


def _burn() -> None:
    while True:
        pass


@contextmanager
def busy_cores(count: int) -> Iterator[None]:
    """`count` processes spinning for as long as the block runs, ended with it."""
    burners = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(count)]
    for burner in burners:
        burner.start()
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
        for burner in burners:
            burner.join()


def run_once(test: str, attempt: int, timeout_s: float) -> Run:
    """One pytest process for one test id (or module), its outcome and the tail of its output."""
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "0", test]
    started = time.monotonic()
    try:
        done = subprocess.run(
            argv, cwd=ROOT, capture_output=True, text=True, timeout=timeout_s, check=False
        )
        passed, output = done.returncode == 0, done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:
        passed = False
        said = [s.decode() if isinstance(s, bytes) else (s or "") for s in (exc.stdout, exc.stderr)]
        output = "".join(said) + f"\n(no end after {timeout_s:.0f} s)"
    tail = "\n".join(str(output).strip().splitlines()[-TAIL_LINES:])
    return Run(test, attempt, passed, time.monotonic() - started, tail)


def hunt(tests: Sequence[str], runs: int, burners: int, timeout_s: float) -> list[Run]:
    found: list[Run] = []
    with busy_cores(burners):
        for attempt in range(1, runs + 1):
            for test in tests:
                run = run_once(test, attempt, timeout_s)
                found.append(run)
                print(
                    f"{'pass' if run.passed else 'FAIL'} {run.seconds:6.1f} s  run {attempt}  {test}",
                    flush=True,
                )
    return found


def table(found: Sequence[Run], burners: int) -> str:
    """The outcome per test as Markdown, then each failure's tail."""
    lines = [
        f"{len(found)} runs with {burners} busy loops on {os.cpu_count()} cores, "
        f"{sum(not r.passed for r in found)} failed",
        "",
        "| test | runs | failed | seconds (min-max) |",
        "| --- | --- | --- | --- |",
    ]
    for test in dict.fromkeys(r.test for r in found):
        mine = [r for r in found if r.test == test]
        seconds = [r.seconds for r in mine]
        lines.append(
            f"| `{test}` | {len(mine)} | {sum(not r.passed for r in mine)} | "
            f"{min(seconds):.0f}-{max(seconds):.0f} |"
        )
    for run in found:
        if not run.passed:
            lines += ["", f"### {run.test}, run {run.attempt}", "", "```", run.tail, "```"]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """A test that waits on how soon something happens passes on a quiet machine and fails on
    CI's; kept busy on purpose, it shows itself in a few runs. Each run is a fresh `pytest -n 0`
    process. Exit 1 if any run failed; `--report FILE` writes the table as Markdown too:

        python -m devtools.flaky_hunt                 # the default list, 5 runs each
        python -m devtools.flaky_hunt --runs 3 tests/integration/reliability/test_turns.py::test_x
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("tests", nargs="*", default=list(DEFAULT_TESTS), help="test ids")
    parser.add_argument("--runs", type=int, default=5, help="runs of each test (default 5)")
    parser.add_argument(
        "--burners", type=int, default=os.cpu_count() or 2, help="busy loops (default: a core each)"
    )
    parser.add_argument("--timeout-s", type=float, default=900, help="a hung run's cap")
    parser.add_argument("--report", type=Path, default=None, help="write the table here too")
    args = parser.parse_args(argv)
    found = hunt(args.tests, args.runs, args.burners, args.timeout_s)
    text = table(found, args.burners)
    print(text)
    if args.report is not None:
        args.report.write_text(text, encoding="utf-8")
    return 1 if any(not r.passed for r in found) else 0


if __name__ == "__main__":
    sys.exit(main())
