"""The scaling benchmark's profiles (devtools/bench/profile.py): py-spy's raw format read back,
each component's inclusive share of a worker's samples, and py-spy's failures named as such.
The profiles are small and hand-written; their frames are copied from a real py-spy 0.4 profile
of a gevent worker (`scripts/bench --scale --profile`), so the markers are the names py-spy
prints."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from devtools.bench import measure as bm
from devtools.bench import profile as bp

TASK = (
    "apply_timeout (celery/concurrency/gevent.py:35);"
    "build_tracer.<locals>.trace_task (celery/app/trace.py:564);"
    "run_unit (tasks/rows.py:256);_run_unit (tasks/rows.py:296)"
)
JUDGE = (
    f"{TASK};GeminiJudge._call_once (worker/judges/gemini.py:240);"
    "BaseModel.__init__ (pydantic/main.py:212)"
)
STORE = (
    f"{TASK};record_unit (worker/lifecycle/units.py:50);VerdictsStore.record_unit (worker/store/verdicts.py:48);"
    "Logger.info (logging/__init__.py:1489);Logger._log (logging/__init__.py:1634)"
)
BROKER = (
    "_run_module_as_main (<frozen runpy>:198);Connection.drain_events (kombu/connection.py:341);"
    "Transport.drain_events (kombu/transport/virtual/base.py:997)"
)
PROFILE = f"{JUDGE} 6\n{STORE} 2\n{BROKER} 1\n 1\n\n"  # " 1": a sample with no Python frame


def test_a_frame_is_a_function_and_the_file_py_spy_shortened() -> None:
    frame = bp.parse_frame("VerdictsStore.record_unit (worker/store/verdicts.py:48)")
    assert (frame.function, frame.file) == ("VerdictsStore.record_unit", "worker/store/verdicts.py")
    lam = bp.parse_frame("run_unit.<locals>.<lambda> (tasks/rows.py:256)")
    assert lam.function == "run_unit.<locals>.<lambda>"
    assert bp.parse_frame("_run_module_as_main (<frozen runpy>:198)").file == "<frozen runpy>"
    assert bp.parse_frame("f (g) (a/b.py)") == bp.Frame("f (g)", "a/b.py")  # no line number
    assert bp.parse_frame("no location") == bp.Frame("no location", "")


def test_raw_lines_are_stacks_root_first_with_their_counts() -> None:
    stacks = bp.parse_raw(PROFILE)
    assert [count for _, count in stacks] == [6, 2, 1, 1]
    assert stacks[2][0][0].function == "_run_module_as_main"
    assert stacks[2][0][-1].function == "Transport.drain_events"
    assert stacks[3][0] == ()


def test_each_component_counts_the_samples_whose_stack_holds_its_marker() -> None:
    summary = bp.summarize(PROFILE, calls=4)
    assert summary["samples"] == 10  # the frameless sample too
    assert summary["samples_per_call"] == 2.5
    shares = summary["shares"]
    assert shares["judge_call"] == 0.6
    assert shares["pydantic"] == 0.6  # inclusive: the same samples as the judge call
    assert shares["store_writes"] == shares["logging"] == 0.2
    assert shares["broker_receive"] == 0.1
    assert shares["acks"] == shares["task_events"] == shares["chord_send"] == 0.0
    assert set(shares) == {c.key for c in bp.COMPONENTS}


def test_a_sample_counts_once_however_often_its_marker_recurs() -> None:
    twice = f"{TASK};prepare_row (tasks/rows.py:174);prepare_row (tasks/rows.py:174) 3\n{BROKER} 1"
    assert bp.summarize(twice, calls=1)["shares"]["prepare_row"] == 0.75


def test_markers_are_whole_names_not_parts() -> None:
    near = (
        f"{TASK};prepare_row.<locals>.<lambda> (tasks/rows.py:200);"
        "_prepare_row (tasks/rows.py:210);record_unit (worker/lifecycle/units.py:50);"
        "RedisBackend.on_chord_part_return (celery/backends/redis.py:520);"
        "QoS.ack (kombu/transport/redis.py:300);"
        "BaseSettings.__init__ (pydantic_settings/main.py:170);"
        "EventDispatcher._publish (celery/events/dispatcher.py:160) 5"
    )
    shares = bp.summarize(near, calls=1)["shares"]
    assert all(share == 0.0 for share in shares.values()), shares


def test_every_marker_matches_the_frame_py_spy_prints_for_it() -> None:
    frames = {
        "judge_call": "GeminiJudge._call_once (worker/judges/gemini.py:240)",
        "task_events": "EventDispatcher.send (celery/events/dispatcher.py:230)",
        "result_and_chord": "Backend.mark_as_done (celery/backends/base.py:160)",
        "acks": "Request.acknowledge (celery/worker/request.py:640)",
        "unacked_bookkeeping": "QoS.append (kombu/transport/redis.py:200)",
        "chord_send": "_chord.run (celery/canvas.py:2000)",
        "broker_receive": "Transport.drain_events (kombu/transport/virtual/base.py:997)",
        "store_writes": "VerdictsStore.record_unit (worker/store/verdicts.py:48)",
        "prepare_row": "prepare_row (tasks/rows.py:174)",
        "aggregate_row": "aggregate_row (tasks/rows.py:309)",
        "logging": "Logger.callHandlers (logging/__init__.py:1700)",
        "call_digest": "call_digest (worker/judges/call_cache.py:20)",
        "pydantic": "validate_core_schema (pydantic_core/core_schema.py:10)",
    }
    assert set(frames) == {c.key for c in bp.COMPONENTS}
    for key, frame in frames.items():
        shares = bp.summarize(f"{TASK};{frame} 1", calls=1)["shares"]
        assert [k for k, v in shares.items() if v] == [key]


def test_pydantic_frames_are_known_by_their_package_folder() -> None:
    match = bp.file_in("pydantic", "pydantic_core")
    assert match(bp.Frame("BaseModel.model_validate", "pydantic/main.py"))
    assert match(bp.Frame("f", "/venv/lib/python3.11/site-packages/pydantic/main.py"))
    assert not match(bp.Frame("f", "mypydantic/main.py"))
    assert not match(bp.Frame("f", "pydantic_settings/main.py"))


def test_an_empty_profile_has_no_shares() -> None:
    summary = bp.summarize("", calls=0)
    assert summary["samples"] == 0 and summary["samples_per_call"] is None
    assert set(summary["shares"].values()) == {None}


def test_the_table_has_a_column_per_worker_and_a_row_per_component() -> None:
    columns = {
        "w2-on/0": {**bp.summarize(PROFILE, calls=4), "py_spy": {"samples": 10, "errors": 3}},
        "w2-on/1": bp.summarize("", calls=4),
    }
    lines = bp.table(columns)
    assert len(lines) == 1 + len(bp.COMPONENTS) + 3
    assert lines[0].split()[-2:] == ["w2-on/0", "w2-on/1"]
    judge = next(line for line in lines if line.startswith("judge_call"))
    assert judge.split()[-2:] == ["0.6", "-"]
    assert lines[-1].split()[-2:] == ["3", "-"]  # errors, unknown for the second


def test_a_missing_py_spy_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SystemExit, match="py-spy"):
        bp.py_spy()


def test_py_spy_that_cannot_attach_fails_loudly(tmp_path: Path) -> None:
    not_python = subprocess.Popen(["sleep", "60"])
    try:
        with pytest.raises(SystemExit, match=r"py-spy exited with \d+ instead of sampling"):
            bp.record_all([not_python.pid], tmp_path, "w1-on")
    finally:
        not_python.kill()
        not_python.wait()
    assert not (tmp_path / "w1-on-worker0.txt").exists()


def test_a_recording_covers_a_busy_process_and_reads_back_as_py_spy_counted(
    tmp_path: Path,
) -> None:
    busy = subprocess.Popen(
        [sys.executable, "-c", "print('ready', flush=True)\nwhile True: sum(range(1000))"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert busy.stdout is not None and busy.stdout.readline() == "ready\n"
        recordings = bp.record_all([busy.pid], tmp_path, "w1-on")
        start = bm.tree_cpu_s(busy.pid)
        deadline = time.monotonic() + 60
        while bm.tree_cpu_s(busy.pid) - start < 0.3:  # sampled while it spent 0.3 s of CPU
            assert time.monotonic() < deadline
            time.sleep(0.02)
        profile = bp.stop_all(recordings, calls=10)
    finally:
        busy.kill()
        busy.wait()
    (worker,) = profile["workers"]
    assert worker["file"] == str(tmp_path / "w1-on-worker0.txt")
    assert worker["samples"] > 0
    assert worker["samples"] == worker["py_spy"]["samples"]  # every line read back
    assert recordings[0].proc.returncode == 0
    assert os.path.getsize(worker["file"]) > 0


def test_py_spy_that_fails_while_recording_fails_loudly(tmp_path: Path) -> None:
    # a stand-in for a py-spy that died with its worker: it exits 1 and writes nothing
    failed = subprocess.Popen([sys.executable, "-c", "raise SystemExit(1)"], text=True)
    failed.wait()
    recording = bp.Recording(4242, tmp_path / "w1-on-worker0.txt", failed)
    with pytest.raises(SystemExit, match="py-spy exited with 1, profile written: False"):
        bp.stop_all([recording], calls=1)
