"""The scaling benchmark's readings (devtools/bench/measure.py): /proc lines, process trees,
INFO commandstats, the latency bound and Celery's banner, read the way the benchmark reads
them. Plain functions; the benchmark itself runs real processes and is not a test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from devtools.bench import measure as bm

# A real line's shape: pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt
# cmajflt utime stime cutime cstime ...
STAT = "4242 (python3 (w) x) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 30 7 3 20 0 17 0 99 0"


def test_a_stat_line_is_read_from_the_last_parenthesis() -> None:
    stat = bm.parse_stat(STAT)
    assert (stat.pid, stat.ppid, stat.cpu_ticks, stat.reaped_ticks) == (4242, 17, 280, 10)


def test_a_tree_holds_every_descendant_and_nothing_beside_it() -> None:
    parents = {1: 0, 10: 1, 11: 10, 12: 11, 13: 10, 20: 1, 21: 20}
    assert bm.descendants(10, parents) == {10, 11, 12, 13}
    assert bm.descendants(12, parents) == {12}


def test_a_tree_counts_live_children_and_the_roots_reaped_ones(tmp_path: Path) -> None:
    def stat(pid: int, ppid: int, utime: int, stime: int, cutime: int = 0) -> str:
        return f"{pid} (p) S {ppid} 0 0 0 -1 0 0 0 0 0 {utime} {stime} {cutime} 0 20 0 1 0 0 0"

    for pid, text in {
        5: stat(5, 1, 100, 20, cutime=50),
        6: stat(6, 5, 10, 5),
        7: stat(7, 6, 1, 1),
        8: stat(8, 1, 999, 999),
    }.items():
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(text)
    (tmp_path / "self").mkdir()
    ticks = os.sysconf("SC_CLK_TCK")
    assert bm.tree_cpu_s(5, tmp_path) == pytest.approx((120 + 50 + 15 + 2) / ticks)
    assert bm.tree_pids(6, tmp_path) == {6, 7}


def test_the_live_tree_of_a_child_process_includes_it() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in bm.tree_pids(os.getpid())
        assert bm.tree_cpu_s(os.getpid()) >= 0
        memory = bm.tree_memory_mb(child.pid)
        assert 0 < memory["rss_end_mb"] <= memory["rss_peak_mb"]
    finally:
        child.kill()
        child.wait()


def test_status_fields_are_read_in_kilobytes() -> None:
    text = "Name:\tpython\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n"
    assert bm.status_kb(text, "VmRSS") == 102400
    assert bm.status_kb(text, "VmHWM") == 204800
    assert bm.status_kb("Name:\tzombie\n", "VmRSS") == 0


def test_commandstats_leave_out_the_benchmarks_own_reading() -> None:
    parsed = {
        "cmdstat_get": {"calls": 3, "usec": 9},
        "cmdstat_hincrby": {"calls": 12, "usec": 30},
        "cmdstat_config|resetstat": {"calls": 1, "usec": 5},
        "cmdstat_info": {"calls": 2, "usec": 5},
        "cmdstat_evalsha": "calls=3,usec=40,usec_per_call=13.33,rejected_calls=0,failed_calls=0",
    }
    counts = bm.command_counts(parsed)
    assert counts == {"hincrby": 12, "evalsha": 3, "get": 3}
    assert list(counts) == ["hincrby", "evalsha", "get"]  # most called first


def test_the_bound_runs_each_stage_in_waves_of_the_slots() -> None:
    assert bm.bound_s([320], 0.2, 16) == pytest.approx(4.0)
    assert bm.bound_s([321], 0.2, 16) == pytest.approx(4.2)
    assert bm.bound_s([40, 320], 1.0, 32) == pytest.approx(2 + 10)  # rubrics, then validators
    assert bm.bound_s([0, 8], 1.0, 16) == pytest.approx(1.0)


def test_ratios_and_scaling_against_linear() -> None:
    assert bm.per_call_ms(0.5, 100) == 5.0
    assert bm.per_call_ms(0.5, 0) is None
    assert bm.ratio(3.0, 0) is None
    assert bm.scaling({1: 80.0, 2: 152.0, 4: 320.0}) == {1: 1.0, 2: 0.95, 4: 1.0}
    assert bm.scaling({2: 100.0, 4: 150.0}) == {2: 1.0, 4: 0.75}


BANNER = """
 -------------- w0-1@host v5.4.0 (opalescent)
- *** --- * --- .> concurrency: 16 (thread)
-- ******* ---- .> task events: OFF (enable -E to monitor tasks in this worker)
--- ***** -----
[2025-01-01 00:00:00,000: INFO/MainProcess] Task evalq.run_unit[abc] received
"""


def test_the_banner_tells_the_pool_and_the_events_in_force() -> None:
    assert bm.banner_value(BANNER, "concurrency") == "16 (thread)"
    assert bm.banner_value(BANNER, "missing") is None
    events = bm.banner_value(BANNER, "task events")
    assert bm.banner_setting("task_events", events) == "off"  # not "on" from "monitor"
    assert bm.banner_setting("task_events", "ON") == "on"
    assert bm.banner_setting("pool", "16 (thread)") == "threads"
    assert bm.banner_setting("pool", "500 (gevent)") == "gevent"
    assert bm.banner_setting("pool", None) is None


def test_a_restarted_worker_reports_its_last_banner() -> None:
    log = BANNER + BANNER.replace("16 (thread)", "8 (gevent)")
    assert bm.banner_value(log, "concurrency") == "8 (gevent)"


def test_settings_not_in_force_are_named_per_worker() -> None:
    seen = {"pool": ["16 (thread)", "16 (thread)"], "task_events": ["ON", "OFF (enable -E)"]}
    assert bm.not_in_force({"pool": "threads", "task_events": "off"}, seen) == [
        "worker 0: asked task_events off, its banner says ON"
    ]
    assert bm.not_in_force({"pool": "gevent", "task_events": "on"}, {"pool": [None]}) == [
        "worker 0: asked pool gevent, its banner says None"
    ]


def test_run_unit_tasks_are_counted_from_the_received_lines() -> None:
    log = BANNER + BANNER.replace("[abc]", "[abd]")
    log += "[x: INFO/MainProcess] Task evalq.run_unit[abc] succeeded in 0.2s: None\n"
    log += "[x: INFO/MainProcess] Task evalq.prepare_row[def] received\n"
    assert bm.units_received(log) == 2
