"""evalq's scaling benchmark (`scripts/bench --scale`): what one judge call costs, and how
throughput grows with workers, against a one-process asyncio client in the same run."""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from devtools.bench import profile as bench_profile
from devtools.bench.common import AsyncJudge, Stack, bench_parser, dataset, stats, this_machine
from devtools.bench.measure import (
    banner_value,
    bound_s,
    command_counts,
    not_in_force,
    per_call_ms,
    ratio,
    scaling,
    tree_cpu_s,
    tree_memory_mb,
    units_received,
)
from evalq.core.reply_schemas import VerdictReply
from evalq.metrics.gecko.prompts import validator_prompt

VERDICT = json.dumps({"explanation": "The image shows it.", "answer": "yes"})
EVENTS = {"on": "true", "off": "false"}
PROFILED = ["first run profiled: py-spy's own CPU shares the machine with it (rates, wall)"]


def script_file(folder: Path) -> Path:
    """One rule: every request gets the same yes verdict (no brain work in the fake server)."""
    path = folder / "script.jsonl"
    path.write_text(json.dumps({"match": ".", "reply": VERDICT}) + "\n")
    return path


def worker_options(pool: str) -> dict[str, str]:
    """How WorkerPool.start is told the pool: always by name, as gevent is the default."""
    return {"pool": pool}


def cpu_snapshot(stack: Stack) -> dict[str, Any]:
    assert stack.redis.proc is not None
    return {
        "workers": [tree_cpu_s(p.pid) for p in stack.pool.procs],
        "redis": tree_cpu_s(stack.redis.proc.pid),
        "fake": tree_cpu_s(stack.fake.proc.pid),
    }


def cpu_spent(before: dict[str, Any], after: dict[str, Any], calls: int) -> dict[str, Any]:
    workers = [b - a for a, b in zip(before["workers"], after["workers"], strict=True)]
    return {
        "workers_ms_per_call": per_call_ms(sum(workers), calls),
        "each_worker_share_ms_per_call": [per_call_ms(w, calls) for w in workers],  # over all calls
        "redis_ms_per_call": per_call_ms(after["redis"] - before["redis"], calls),
        "fake_server_ms_per_call": per_call_ms(after["fake"] - before["fake"], calls),
        "workers_cpu_s": round(sum(workers), 3),
    }


def effective(stack: Stack) -> dict[str, list[str | None]]:
    """What each worker's Celery banner says it runs with: the settings asked for may not be
    the ones in force (a runtime that does not read EVALQ_TASK_EVENTS keeps events on)."""
    logs = [p.read_text(errors="replace") for p in sorted(stack.pool.log_dir.glob("*.log"))]
    return {
        "pool": [banner_value(log, "concurrency") for log in logs],
        "task_events": [banner_value(log, "task events") for log in logs],
    }


def run_baseline(url: str, path: Path, concurrency: int, fake_pid: int) -> dict[str, Any]:
    """The baseline in a process of its own, so its CPU and memory are its alone."""
    before = tree_cpu_s(fake_pid)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "devtools.bench.scale",
            "--baseline-child",
            url,
            str(path),
            str(concurrency),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the baseline failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    calls = int(result["calls"])
    result["fake_server_ms_per_call"] = per_call_ms(tree_cpu_s(fake_pid) - before, calls)
    result["cpu_ms_per_call"] = per_call_ms(result.pop("cpu_s"), calls)
    result["calls_per_s"] = round(calls / result["wall_s"], 1)
    return result


def baseline_child(url: str, path: Path, concurrency: int) -> dict[str, Any]:
    judge = AsyncJudge(url, concurrency)
    rows = [json.loads(line) for line in path.read_text().splitlines()]

    async def row(record: dict[str, Any]) -> None:
        image = (path.parent / record["image"]).read_bytes()
        replies = await asyncio.gather(
            *(
                judge.ask(validator_prompt(q["question"]), image, VerdictReply)
                for q in record["questions"]
            )
        )
        for reply in replies:
            VerdictReply.model_validate_json(reply)

    async def everything() -> None:
        await asyncio.gather(*(row(r) for r in rows))

    cpu, start = time.process_time(), time.monotonic()
    asyncio.run(everything())
    wall = time.monotonic() - start
    return {
        "wall_s": round(wall, 3),
        "calls": judge.calls,
        "cpu_s": time.process_time() - cpu,
        "rss_peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def one_run(
    work: Path, path: Path, args: argparse.Namespace, workers: int, events: str
) -> dict[str, Any]:
    fake_args = ["--latency-ms", str(args.latency_ms), "--script", str(script_file(work.parent))]
    try:
        stack = Stack(
            work,
            fake_args,
            workers=workers,
            concurrency=args.concurrency,
            worker_options=worker_options(args.pool),
            EVALQ_TASK_EVENTS=EVENTS[events],
        )
    except RuntimeError as exc:
        raise SystemExit(f"workers with --pool {args.pool} did not start: {exc}") from exc
    recordings: list[bench_profile.Recording] = []
    try:
        redis = stack.redis.client()
        slots = workers * args.concurrency
        seen = effective(stack)
        # A small job of other prompts first: the workers' first tasks import and connect,
        # which is not what a call costs.
        stack.run(dataset(path.parent, 2 * workers, f"warmup{workers}", args.questions_per_row))
        before, requests = cpu_snapshot(stack), stats(stack.fake.url)["requests"]
        redis.config_resetstat()
        if args.profile:
            pids = [p.pid for p in stack.pool.procs]
            recordings = bench_profile.record_all(pids, args.profile, work.name)
        wall, summary = stack.run(path)
        calls = int(summary.judge_calls)
        profile = bench_profile.stop_all(recordings, calls) if args.profile else None
        after = cpu_snapshot(stack)
        commands = command_counts(redis.info("commandstats"))
        memory = [tree_memory_mb(p.pid) for p in stack.pool.procs]
        sent = stats(stack.fake.url)["requests"] - requests
        bound = bound_s([calls], args.latency_ms / 1000, slots)
        first_units = units_received(stack.pool.logs())
        first: dict[str, Any] = {
            "judge_calls": calls,
            "requests": sent,
            "rows_scored": summary.rows_scored,
            "wall_s": round(wall, 3),
            "bound_s": round(bound, 3),
            "bound_over_wall": ratio(bound, wall),
            "calls_per_s": round(calls / wall, 1),
            "cpu": cpu_spent(before, after, calls),
            "memory_per_worker": memory,
            "redis_commands_per_call": ratio(sum(commands.values()), calls, 2),
            "redis_commands": commands,
            "unit_tasks_in_logs": first_units,
        }
        if profile is not None:
            first["profile"] = profile

        requests = stats(stack.fake.url)["requests"]
        # A rerun takes well under a second: polled finely, so the poll does not set its wall.
        rerun_wall, rerun = stack.run(path, poll_s=0.01)
        counters, _ = stack.client.job_reads.progress(rerun.job_id)
        unit_tasks, source = counters.unit_tasks, "job counter unit_tasks"
        cached = {
            "wall_s": round(rerun_wall, 3),
            "wall_vs_first": ratio(rerun_wall, wall),
            "speedup": ratio(wall, rerun_wall, 1),
            "requests": stats(stack.fake.url)["requests"] - requests,
            "cache_hits": rerun.cache_hits,
            "unit_tasks_sent": unit_tasks,
            "unit_tasks_source": source,
        }

        assert stack.redis.proc is not None
        base = run_baseline(stack.fake.url, path, slots, stack.fake.proc.pid)
    finally:
        bench_profile.abandon(recordings)  # only if the run failed: stop_all waited for them
        stack.close()
    base["bound_over_wall"] = ratio(bound, base["wall_s"])
    cpu = first["cpu"]
    asked = {"pool": args.pool, "task_events": events}
    return {
        "workers": workers,
        "events": events,
        "pool": args.pool,
        "concurrency_per_worker": args.concurrency,
        "slots": slots,
        "effective": seen,
        "warnings": not_in_force(asked, seen) + (PROFILED if "profile" in first else []),
        "evalq": first,
        "cached_rerun": cached,
        "baseline": base,
        "ratios": {
            "worker_cpu_over_baseline_cpu": ratio(
                cpu["workers_ms_per_call"], base["cpu_ms_per_call"], 2
            ),
            "worker_plus_redis_cpu_over_baseline_cpu": ratio(
                (cpu["workers_ms_per_call"] or 0) + (cpu["redis_ms_per_call"] or 0),
                base["cpu_ms_per_call"],
                2,
            ),
            "calls_per_s_over_baseline": ratio(first["calls_per_s"], base["calls_per_s"]),
            "wall_over_baseline_wall": ratio(first["wall_s"], base["wall_s"]),
        },
    }


def goals(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The scaling targets, per events setting, each against the worst run (information only:
    the figures depend on the machine, and bound / wall is the goal at 1 s latency)."""
    out: dict[str, Any] = {}
    for events in sorted({r["events"] for r in runs}):
        mine = [r for r in runs if r["events"] == events]
        cpu = [r["ratios"]["worker_cpu_over_baseline_cpu"] for r in mine]
        redis = [r["evalq"]["cpu"]["redis_ms_per_call"] for r in mine]
        efficiency = [r["evalq"]["bound_over_wall"] for r in mine]
        linear = scaling({r["workers"]: r["evalq"]["calls_per_s"] for r in mine})
        speedup = [r["cached_rerun"]["speedup"] for r in mine]
        units = [r["cached_rerun"]["unit_tasks_sent"] for r in mine]
        out[events] = {
            "worker_cpu_over_baseline <= 1.5": max(cpu),
            "bound_over_wall >= 0.97": min(efficiency),
            "redis_cpu_ms_per_call <= 0.25": max(redis),
            "scaling_vs_linear >= 0.95": linear,
            "cached_rerun_speedup >= 20": min(speedup),
            "cached_rerun_unit_tasks == 0": max(units),
            # Context, not goals: the same figures for the asyncio client in the same runs.
            "baseline_bound_over_wall": min(r["baseline"]["bound_over_wall"] for r in mine),
            "baseline_scaling_vs_linear": scaling(
                {r["workers"]: r["baseline"]["calls_per_s"] for r in mine}
            ),
        }
    return out


def print_table(runs: list[dict[str, Any]]) -> None:
    head = (
        f"{'W':>2} {'events':>6} {'calls/s':>8} {'bnd/wall':>8} {'wrk ms':>7} {'base ms':>7} "
        f"{'ratio':>6} {'redis ms':>8} {'fake ms':>7} {'cmds':>6} {'RSS MB':>7} "
        f"{'rerun':>7} {'units':>5} {'wall/base':>9}"
    )
    print(head)
    for r in runs:
        e, c, b = r["evalq"], r["evalq"]["cpu"], r["baseline"]
        rss = max(m["rss_peak_mb"] for m in e["memory_per_worker"])
        print(
            f"{r['workers']:>2} {r['events']:>6} {e['calls_per_s']:>8} {e['bound_over_wall']:>8} "
            f"{c['workers_ms_per_call']:>7} {b['cpu_ms_per_call']:>7} "
            f"{r['ratios']['worker_cpu_over_baseline_cpu']:>6} {c['redis_ms_per_call']:>8} "
            f"{c['fake_server_ms_per_call']:>7} {e['redis_commands_per_call']:>6} {rss:>7} "
            f"{r['cached_rerun']['wall_vs_first']:>7} {r['cached_rerun']['unit_tasks_sent']:>5} "
            f"{r['ratios']['wall_over_baseline_wall']:>9}"
        )
    print(
        "W workers; bnd/wall: latency bound over wall; wrk/base ms: CPU per judge call of the "
        "workers / the asyncio baseline; cmds: Redis commands per call; RSS: peak per worker; "
        "rerun: cached rerun wall over the first run; units: run_unit tasks it sent; wall/base: "
        "evalq's wall over the baseline's at the same total concurrency"
    )


def print_profiles(runs: list[dict[str, Any]]) -> None:
    columns = {
        f"w{r['workers']}-{r['events']}/{n}": worker
        for r in runs
        for n, worker in enumerate(r["evalq"]["profile"]["workers"])
    }
    print()
    print("\n".join(bench_profile.table(columns)))
    print(
        "py-spy profiles of the first run, a column per worker (w<workers>-<events>/<worker>): "
        "the share of the worker's non-idle samples (running or waiting for a CPU) whose stack "
        "holds the marker frame "
        "(inclusive: shares overlap and do not sum to 1); samples per judge call are the "
        f"worker's samples over all the run's calls, at {bench_profile.RATE_HZ} Hz"
    )


HELP = """evalq's scaling benchmark (`scripts/bench --scale`): what one judge call costs, and how
throughput grows with workers, against a one-process asyncio client in the same run.

Setup: gecko-image rows that bring their own questions (Q per row, `--questions` replace, the
default, so no rubric call is made), every call distinct; the fake server answers every call
with one scripted verdict after `--latency-ms`. For each worker count W and each Flower events
setting (EVALQ_TASK_EVENTS=true/false in the workers' environment), on a fresh Redis, fake server
and W workers of C slots each:

- the first run: calls/s, and bound / wall, where bound is the ideal wall time: the job's calls
  run W*C at a time, each taking exactly the latency, nothing else costing time, and a row's
  stages (rubric, then validators; here validators only) one after another
  (devtools.bench.measure.bound_s);
- CPU ms per judge call of each worker's process tree, of redis-server and of the fake server
  (/proc utime+stime, before and after; devtools.bench.measure);
- RSS per worker at the end of the run and its peak (VmHWM), from /proc;
- Redis commands per judge call from INFO commandstats (CONFIG RESETSTAT just before the run),
  with the count per command; the benchmark's own polling of the job's progress (one small
  pipeline every 0.2 s) is included, a few commands per second;
- a cached rerun of the same dataset: wall against the first run (the rerun's progress is
  polled every 10 ms, the first run's every 0.2 s), requests reaching the fake server, and run_unit tasks sent: the job's `unit_tasks` counter where the runtime keeps one,
  else the "evalq.run_unit[...] received" lines in the workers' logs (every task a worker
  takes is logged there at INFO, whatever the events setting);
- the baseline: a child process asks the same prompts with the same image through
  google-genai's aio client behind a semaphore of W*C (devtools.bench.common.AsyncJudge, each reply parsed);
  its own CPU (process_time) and peak RSS, and the fake server's CPU meanwhile.

With `--profile DIR`, py-spy samples every worker process during the first run only (not the
warm-up, the cached rerun or the baseline) at 200 Hz without idle samples, writing
DIR/w<W>-<events>-worker<N>.txt (raw, collapsed stacks); each profile is summarized under
evalq.profile and in a table: per component of a call's path (the judge call, Celery's events,
acks, the result backend, the broker, evalq's Store, logging, pydantic...), the share of the
worker's samples whose stack holds that component's marker frame (devtools.bench.profile.COMPONENTS;
inclusive shares, they overlap). py-spy needs ptrace on the workers; where it is missing or
cannot attach, the benchmark stops with an error rather than leave the profile out.

Ratios against the baseline and across worker counts are the results; absolute figures depend
on the machine and on what else runs on it (the load average is recorded).
"""


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = bench_parser(
        HELP,
        prog="scripts/bench --scale",
        latency_ms=200,
        concurrency=16,
        concurrency_help="slots per worker",
        out="bench-scale.json",
    )
    parser.add_argument("--workers", default="1,2,4", help="worker counts, comma-separated")
    parser.add_argument("--pool", choices=["threads", "gevent"], default="gevent")
    parser.add_argument("--rows", type=int, default=40)
    parser.add_argument("--questions-per-row", type=int, default=8)
    parser.add_argument("--events", choices=["on", "off", "both"], default="both")
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="DIR",
        help="py-spy every worker during the measured first run into DIR/<run>-worker<N>.txt "
        "(raw format) and summarize the profiles into the JSON and a table",
    )
    args = parser.parse_args(argv)
    args.worker_counts = sorted({int(w) for w in args.workers.split(",") if w.strip()})
    return args


def main(argv: list[str]) -> int:
    if argv[:1] == ["--baseline-child"]:
        url, path, concurrency = argv[1], Path(argv[2]), int(argv[3])
        print(json.dumps(baseline_child(url, path, concurrency)))
        return 0
    args = parse_args(argv)
    if args.profile:
        bench_profile.py_spy()  # missing: fail now, not after the first stack has started
    settings = ["on", "off"] if args.events == "both" else [args.events]
    runs = []
    with tempfile.TemporaryDirectory(prefix="evalq-bench-scale-") as tmp:
        work = Path(tmp)
        path = dataset(work / "data", args.rows, "scale", questions_per_row=args.questions_per_row)
        for events in settings:
            for workers in args.worker_counts:
                print(f"-- {workers} worker(s), events {events}", file=sys.stderr)
                runs.append(one_run(work / f"w{workers}-{events}", path, args, workers, events))
    results = {
        "machine": this_machine(),
        "setup": {
            "rows": args.rows,
            "questions_per_row": args.questions_per_row,
            "latency_ms": args.latency_ms,
            "concurrency_per_worker": args.concurrency,
            "pool": args.pool,
            "rubric_calls": 0,
        },
        "runs": runs,
        "scaling_vs_linear": {
            events: scaling(
                {r["workers"]: r["evalq"]["calls_per_s"] for r in runs if r["events"] == events}
            )
            for events in settings
        },
        # The asyncio client at the same total concurrency (W*C): what the fake server and the
        # machine allow, with no task system at all.
        "baseline_scaling_vs_linear": {
            events: scaling(
                {r["workers"]: r["baseline"]["calls_per_s"] for r in runs if r["events"] == events}
            )
            for events in settings
        },
        "goals": goals(runs),
    }
    print_table(runs)
    if args.profile:
        print_profiles(runs)
    for run in runs:
        for warning in run["warnings"]:
            print(f"warning ({run['workers']} workers, events {run['events']}): {warning}")
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
