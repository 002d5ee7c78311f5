"""``scripts/bench --fairness``: a small job submitted behind a large one on the same workers.

Measured in one run on one stack (one worker, the fake server at a fixed latency, every row
with its own questions so nothing is cached): the small job alone, the large job alone, then
the large job with the small one submitted a moment after it. Reported as ratios: the small
job's time behind the large one over its time alone (goal: within 2x), and the large job's
time with the small one over its time alone (goal: at most 10% of throughput lost). With
``--contrast`` the large job alone and the pair run again with a window wider than the large
job (no turns, as before worker.turns): the small job then waits for the whole large job, and
the large job's time alone shows what turns cost a job that has the workers to itself."""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from devtools.bench.common import Stack, bench_parser, dataset, this_machine
from evalq.client import Client
from worker.settings import Settings

NO_TURNS = 1_000_000  # a window no job here fills: every row goes to the broker at submit


def timed(client: Client, job_id: str, start: float) -> float:
    client.wait(job_id, timeout_s=3600, poll_s=0.1)
    return time.monotonic() - start


def pair(stack: Stack, client: Client, large: Path, small: Path, delay_s: float) -> dict[str, Any]:
    """The large job, and the small one `delay_s` after it; each one's wall time."""
    times: dict[str, float] = {}
    start = time.monotonic()
    big = client.submit("gecko-image", large, use_cache=False).job_id

    def wait_large() -> None:
        times["large_s"] = timed(client, big, start)

    waiter = threading.Thread(target=wait_large)
    waiter.start()
    time.sleep(delay_s)  # the scenario itself: the small job arrives once the large one runs
    small_start = time.monotonic()
    quick = client.submit("gecko-image", small, use_cache=False).job_id
    times["small_s"] = timed(client, quick, small_start)
    waiter.join()
    return {k: round(v, 2) for k, v in times.items()}


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    fake = ["--latency-ms", str(args.latency_ms)]
    large = dataset(work / "large", args.large_rows, "large", args.questions)
    small = dataset(work / "small", args.small_rows, "small", args.questions)
    results: dict[str, Any] = {
        "setup": {
            "workers": 1,
            "concurrency": args.concurrency,
            "latency_ms": args.latency_ms,
            "questions_per_row": args.questions,
            "large_rows": args.large_rows,
            "small_rows": args.small_rows,
            "small_after_s": args.delay_s,
        }
    }
    stack = Stack(work, fake, 1, args.concurrency)
    try:
        results["small_alone_s"] = round(stack.run(small, use_cache=False)[0], 2)
        results["large_alone_s"] = round(stack.run(large, use_cache=False)[0], 2)
        results["turns"] = pair(stack, stack.client, large, small, args.delay_s)
    finally:
        stack.close()
    if args.contrast:
        stack = Stack(work, fake, 1, args.concurrency, EVALQ_TURN_WINDOW=str(NO_TURNS))
        wide = Client(
            Settings(
                redis_url=stack.redis.url,
                gemini_base_url=stack.fake.url,
                api_key=None,
                turn_window=NO_TURNS,
            )
        )
        try:
            start = time.monotonic()
            alone = wide.submit("gecko-image", large, use_cache=False).job_id
            results["no_turns_large_alone_s"] = round(timed(wide, alone, start), 2)
            results["no_turns"] = pair(stack, wide, large, small, args.delay_s)
        finally:
            stack.close()
    return results


def main(argv: list[str]) -> int:
    parser = bench_parser(
        __doc__,
        prog="scripts/bench --fairness",
        latency_ms=500,
        concurrency=8,
        out="bench-fairness.json",
    )
    parser.add_argument("--large-rows", type=int, default=300)
    parser.add_argument("--small-rows", type=int, default=5)
    parser.add_argument("--questions", type=int, default=4)
    parser.add_argument("--delay-s", type=float, default=1.0)
    parser.add_argument("--contrast", action="store_true", help="also run without turns")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="evalq-fairness-") as tmp:
        results = measure(args, Path(tmp))
    results["machine"] = this_machine()
    turns = results["turns"]
    small_ratio = turns["small_s"] / results["small_alone_s"]
    large_ratio = turns["large_s"] / results["large_alone_s"]
    results["small_behind_over_alone"] = round(small_ratio, 2)
    results["large_with_over_alone"] = round(large_ratio, 2)
    setup = results["setup"]
    print(
        f"\nfairness: 1 worker x {setup['concurrency']}, latency {setup['latency_ms']} ms, "
        f"{setup['questions_per_row']} questions a row; a {setup['small_rows']}-row job "
        f"{setup['small_after_s']:g} s after a {setup['large_rows']}-row job"
    )
    print(
        f"small job: alone {results['small_alone_s']} s, behind the large job {turns['small_s']} s"
        f" = {small_ratio:.2f}x (goal <= 2x)"
    )
    print(
        f"large job: alone {results['large_alone_s']} s, with the small job {turns['large_s']} s"
        f" = {large_ratio:.2f}x (goal <= 1.10x)"
    )
    if "no_turns" in results:
        off = results["no_turns"]
        print(
            f"without turns: small job {off['small_s']} s "
            f"({off['small_s'] / results['small_alone_s']:.1f}x alone), large job {off['large_s']} s"
            f"; the large job alone without turns {results['no_turns_large_alone_s']} s (turns "
            f"cost it {results['large_alone_s'] / results['no_turns_large_alone_s']:.2f}x)"
        )
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0
