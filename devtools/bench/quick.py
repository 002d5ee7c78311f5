"""evalq's quick benchmark: efficiency against the latency bound, quota adherence, overhead
against a plain asyncio client, and a cached rerun, in one run on this machine."""

from __future__ import annotations

import asyncio
import importlib
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from devtools.bench.common import AsyncJudge, Stack, bench_parser, dataset, stats, this_machine
from evalq.core.reply_schemas import RubricReply, VerdictReply
from evalq.metrics.gecko.parsing import parse_rubric
from evalq.metrics.gecko.prompts import rubric_prompt, validator_prompt


def bench_latency(work: Path, rows: int, latency_ms: int, concurrency: int) -> dict[str, Any]:
    stack = Stack(work, ["--latency-ms", str(latency_ms)], workers=1, concurrency=concurrency)
    try:
        path = dataset(work / "data", rows, "latency")
        wall, summary = stack.run(path)
        questions = sum(len(r.questions) for r in stack.client.results(summary.job_id))
        rubric_calls = rows
        latency_s = latency_ms / 1000
        bound = (
            math.ceil(rubric_calls / concurrency) * latency_s
            + math.ceil(questions / concurrency) * latency_s
        )
        rerun_wall, rerun = stack.run(path)
        return {
            "rows": rows,
            "questions": questions,
            "latency_ms": latency_ms,
            "concurrency": concurrency,
            "judge_calls": summary.judge_calls,
            "wall_s": round(wall, 2),
            "bound_s": round(bound, 2),
            "wall_over_bound": round(wall / bound, 2),
            "rerun": {
                "requests": stats(stack.fake.url)["requests"] - summary.judge_calls,
                "judge_calls": rerun.judge_calls,
                "wall_s": round(rerun_wall, 2),
                "wall_vs_first": round(rerun_wall / wall, 3),
                "cache_hits": rerun.cache_hits,
                "rubric_cache_hits": rerun.rubric_cache_hits,
            },
        }
    finally:
        stack.close()


def bench_quota(
    work: Path, rows: int, rpm: int, window_s: float, concurrency: int
) -> dict[str, Any]:
    limits = json.dumps({"*": {"rpm": rpm}})
    stack = Stack(
        work,
        ["--rpm", str(rpm), "--quota-window-s", str(window_s)],
        workers=2,
        concurrency=concurrency,
        EVALQ_RATE_LIMITS=limits,
    )
    try:
        wall, summary = stack.run(dataset(work / "data", rows, "quota"))
        s = stats(stack.fake.url)
        ideal = (s["requests"] - 1) / (rpm / 60)
        return {
            "rows": rows,
            "rpm": rpm,
            "quota_window_s": window_s,
            "offered_concurrency": 2 * concurrency,
            "requests": s["requests"],
            "answered_429": s["by_status"].get("429", 0),
            "share_429": round(s["by_status"].get("429", 0) / s["requests"], 4),
            "wall_s": round(wall, 2),
            "ideal_s": round(ideal, 2),
            "wall_over_ideal": round(wall / ideal, 2),
            "limiter_wait_s": round(summary.limiter_wait_s, 1),
        }
    finally:
        stack.close()


async def baseline(url: str, path: Path, concurrency: int) -> tuple[float, int]:
    """What a user would write instead: one process, the async client, a semaphore."""
    judge = AsyncJudge(url, concurrency)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    call = judge.ask

    async def row(record: dict[str, Any]) -> None:
        image = (path.parent / record["image"]).read_bytes()
        rubric = parse_rubric(await call(rubric_prompt(record["prompt"]), image, RubricReply))
        await asyncio.gather(
            *(call(validator_prompt(q.question), image, VerdictReply) for q in rubric.questions)
        )

    start = time.monotonic()
    await asyncio.gather(*(row(r) for r in rows))
    return time.monotonic() - start, judge.calls


def bench_overhead(work: Path, rows: int, concurrency: int) -> dict[str, Any]:
    stack = Stack(work, [], workers=1, concurrency=concurrency)
    try:
        wall, summary = stack.run(dataset(work / "data", rows, "overhead"), use_cache=False)
        base_wall, base_calls = asyncio.run(
            baseline(stack.fake.url, dataset(work / "data", rows, "overhead-base"), concurrency)
        )
        evalq_rate, base_rate = summary.judge_calls / wall, base_calls / base_wall
        return {
            "rows": rows,
            "concurrency": concurrency,
            "evalq_calls": summary.judge_calls,
            "evalq_wall_s": round(wall, 2),
            "evalq_calls_per_s": round(evalq_rate, 1),
            "baseline_calls": base_calls,
            "baseline_wall_s": round(base_wall, 2),
            "baseline_calls_per_s": round(base_rate, 1),
            "evalq_over_baseline": round(evalq_rate / base_rate, 2),
        }
    finally:
        stack.close()


HELP = """evalq's benchmark: four measurements in one run, on this machine, against the fake server.

1. efficiency against the latency bound: N rows x Q questions at latency L with C concurrent
   calls; wall time versus ceil(N/C)*L (rubrics) + ceil(N*Q/C)*L (validators);
2. quota adherence: a per-minute quota well below the offered load; wall time versus
   calls / quota, and the share of requests answered 429;
3. overhead at zero latency: judge calls per second through evalq, against what a user would
   write instead (one asyncio process, google-genai's async client, a semaphore of C), as a ratio;
4. a cached rerun of (1): requests made and wall time, against the first run.

Ratios only: absolute times depend on the machine (printed with the results).

`scripts/bench --fairness ...` runs the fairness benchmark (devtools.bench.fairness),
`scripts/bench --submit ...` a million-row submit (devtools.bench.submit).
`scripts/bench --adaptive ...` adaptive repeats against 8 samples (devtools.bench.adaptive).
`scripts/bench --scale ...` runs the scaling benchmark instead (devtools.bench.scale): CPU,
memory and Redis commands per judge call across worker counts, against the same baseline.
"""


# The benchmarks `scripts/bench --<name>` runs instead of this one: name, what it measures.
OTHER_BENCHES = (
    ("scale", "the scaling benchmark"),
    ("submit", "a large submit"),
    ("archive", "what the archive costs"),
    ("adaptive", "adaptive repeats against 8 samples"),
    ("fairness", "a small job behind a large one"),
)


def main() -> int:
    for name, _ in OTHER_BENCHES:
        if f"--{name}" in sys.argv[1:]:
            other = importlib.import_module(f"devtools.bench.{name}")
            return int(other.main([a for a in sys.argv[1:] if a != f"--{name}"]))
    parser = bench_parser(HELP, latency_ms=200, concurrency=16, out="bench-results.json")
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--rpm", type=int, default=240)
    parser.add_argument("--quota-window-s", type=float, default=10.0)
    parser.add_argument("--quota-rows", type=int, default=40)
    for name, what in OTHER_BENCHES:
        parser.add_argument(
            f"--{name}", action="store_true", help=f"{what} (devtools.bench.{name})"
        )
    parser.add_argument(
        "--only", choices=["overhead"], default=None, help="run one measurement (for profiling)"
    )
    args = parser.parse_args()
    machine = this_machine()
    results: dict[str, Any] = {"machine": machine}
    with tempfile.TemporaryDirectory(prefix="evalq-bench-") as tmp:
        work = Path(tmp)
        if args.only == "overhead":
            print(json.dumps(bench_overhead(work, args.rows, args.concurrency), indent=1))
            return 0
        results["latency_bound"] = bench_latency(work, args.rows, args.latency_ms, args.concurrency)
        results["quota"] = bench_quota(
            work, args.quota_rows, args.rpm, args.quota_window_s, args.concurrency // 2
        )
        results["overhead_zero_latency"] = bench_overhead(work, args.rows, args.concurrency)
    lat, quota, over = results["latency_bound"], results["quota"], results["overhead_zero_latency"]
    table = [
        (
            "efficiency vs latency bound",
            f"{lat['rows']} rows x {lat['questions'] / lat['rows']:.1f} q, L={lat['latency_ms']} ms, C={lat['concurrency']}",
            f"wall {lat['wall_s']} s / bound {lat['bound_s']} s = {lat['wall_over_bound']}",
        ),
        (
            "quota adherence",
            f"{quota['requests']} requests at {quota['rpm']} rpm (window {quota['quota_window_s']} s)",
            f"wall {quota['wall_s']} s / ideal {quota['ideal_s']} s = {quota['wall_over_ideal']}; 429 share {quota['share_429']:.1%}",
        ),
        (
            "overhead at zero latency",
            f"{over['evalq_calls']} calls, C={over['concurrency']}",
            f"evalq {over['evalq_calls_per_s']}/s vs asyncio baseline {over['baseline_calls_per_s']}/s = {over['evalq_over_baseline']}",
        ),
        (
            "cached rerun",
            f"same {lat['rows']} rows",
            f"{lat['rerun']['requests']} requests; wall {lat['rerun']['wall_s']} s = {lat['rerun']['wall_vs_first']} of the first run",
        ),
    ]
    width = max(len(r[0]) for r in table)
    print(
        f"\nevalq bench on {machine['cpus']} CPUs, Python {machine['python']}, {machine['platform']}"
    )
    for name, setup, result in table:
        print(f"{name:<{width}}  {setup}\n{'':<{width}}  -> {result}")
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
