"""``scripts/bench --fairness``: a small job submitted behind a large one on the same workers,
at the widths people run, against each job alone."""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from devtools.bench.common import Stack, bench_parser, dataset, this_machine
from evalq.client import Client
from evalq.worker.settings import Settings

NO_TURNS = 1_000_000  # a window no job here fills: every row goes to the broker at submit


def timed(client: Client, job_id: str, start: float) -> float:
    client.wait(job_id, timeout_s=3600, poll_s=0.1)
    return time.monotonic() - start


def submit(client: Client, path: Path) -> str:
    return client.submit("gecko-image", path, use_cache=False).job_id


def pair(client: Client, large: Path, small: Path, delay_s: float) -> dict[str, Any]:
    """The large job, and the small one `delay_s` after it; each one's wall time."""
    times: dict[str, float] = {}
    start = time.monotonic()
    big = submit(client, large)

    def wait_large() -> None:
        times["large_s"] = timed(client, big, start)

    waiter = threading.Thread(target=wait_large)
    waiter.start()
    time.sleep(delay_s)  # the scenario itself: the small job arrives once the large one runs
    small_start = time.monotonic()
    quick = submit(client, small)
    times["small_s"] = timed(client, quick, small_start)
    waiter.join()
    return {k: round(v, 2) for k, v in times.items()}


@dataclass(frozen=True)
class Width:
    """One setup the benchmark runs: how many workers, of how many slots, in which pool, and
    the large job's rows there (fewer at narrow widths, so each run takes about as long)."""

    name: str
    workers: int
    concurrency: int | None  # None: what `evalq worker` starts with no options
    pool: str
    large_rows: int


WIDTHS = (
    Width("default", 1, None, "gevent", 1500),
    Width("4 default", 4, None, "gevent", 1500),
    Width("threads", 1, None, "threads", 300),
    Width("8 slots", 1, 8, "gevent", 300),
)


def slots(width: Width) -> int:
    return width.concurrency or Settings(worker_pool=width.pool).concurrency


def measure(args: argparse.Namespace, width: Width, work: Path) -> dict[str, Any]:
    """The small job alone, the large job alone, then the pair, on one stack of `width`."""
    fake = ["--latency-ms", str(args.latency_ms)]
    large_rows = args.large_rows or width.large_rows
    large = dataset(work / "large", large_rows, "large", args.questions)
    small = dataset(work / "small", args.small_rows, "small", args.questions)
    results: dict[str, Any] = {
        "setup": {
            "width": width.name,
            "workers": width.workers,
            "pool": width.pool,
            "concurrency": slots(width),
            "latency_ms": args.latency_ms,
            "questions_per_row": args.questions,
            "large_rows": large_rows,
            "small_rows": args.small_rows,
            "small_after_s": args.delay_s,
        }
    }
    env = {"EVALQ_TURN_WINDOW": str(NO_TURNS)} if args.contrast else {}
    options = {"pool": width.pool}
    stack = Stack(work, fake, width.workers, slots(width), options, **env)
    client = stack.client
    if args.contrast:
        client = Client(
            Settings(
                redis_url=stack.redis.url,
                gemini_base_url=stack.fake.url,
                api_key=None,
                turn_window=NO_TURNS,
            )
        )
    try:
        start = time.monotonic()
        results["small_alone_s"] = round(timed(client, submit(client, small), start), 2)
        start = time.monotonic()
        results["large_alone_s"] = round(timed(client, submit(client, large), start), 2)
        results["pair"] = pair(client, large, small, args.delay_s)
    finally:
        stack.close()
    pair_s = results["pair"]
    results["small_behind_over_alone"] = round(pair_s["small_s"] / results["small_alone_s"], 2)
    results["large_throughput_with_over_alone"] = round(
        results["large_alone_s"] / pair_s["large_s"], 3
    )
    return results


HELP = """``scripts/bench --fairness``: a small job submitted behind a large one on the same workers,
at the widths people run.

Each setup (--widths) runs on a stack of its own: the fake server at a fixed latency, every row
with its own questions so nothing is cached, and the workers of that width. By default:

- "default": one worker as `evalq worker` starts it with no options (gevent, 200 slots);
- "4 default": four of them;
- "threads": one worker of the threads pool at its default slots (16);
- "8 slots": one gevent worker of 8 slots, a narrow width.

In each: the small job alone, the large job alone, then the large job with the small one
submitted a moment after it. Reported as ratios measured in that one run: the small job's time
behind the large one over its time alone (goal: within 2x), and the large job's throughput
with the small one over alone (its time alone over its time with; goal: at least 0.90). With
``--contrast`` every setup runs with a window wider than the large job instead (no turns: every row
in the broker at once), for the figures turns are compared against.
"""


def main(argv: list[str]) -> int:
    parser = bench_parser(
        HELP,
        prog="scripts/bench --fairness",
        latency_ms=500,
        concurrency=None,
        out="bench-fairness.json",
    )
    parser.add_argument(
        "--widths",
        default=",".join(w.name for w in WIDTHS),
        help="the setups to run, by name, comma-separated (default: all of them)",
    )
    parser.add_argument("--large-rows", type=int, default=0, help="0: each setup's own")
    parser.add_argument("--small-rows", type=int, default=5)
    parser.add_argument("--questions", type=int, default=4)
    parser.add_argument("--delay-s", type=float, default=1.0)
    parser.add_argument("--contrast", action="store_true", help="run without turns instead")
    args = parser.parse_args(argv)
    by_name = {w.name: w for w in WIDTHS}
    chosen = [by_name[name.strip()] for name in args.widths.split(",")]
    runs = []
    for width in chosen:
        with tempfile.TemporaryDirectory(prefix="evalq-fairness-") as tmp:
            runs.append(measure(args, width, Path(tmp)))
        report(runs[-1])
    results = {"runs": runs, "machine": this_machine(), "contrast": args.contrast}
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


def report(run: dict[str, Any]) -> None:
    setup, pair_s = run["setup"], run["pair"]
    print(
        f"\n{setup['width']}: {setup['workers']} worker(s) x {setup['concurrency']} slots "
        f"({setup['pool']}), latency {setup['latency_ms']} ms, {setup['questions_per_row']} "
        f"questions a row; a {setup['small_rows']}-row job {setup['small_after_s']:g} s after a "
        f"{setup['large_rows']}-row job"
    )
    print(
        f"  small job: alone {run['small_alone_s']} s, behind {pair_s['small_s']} s"
        f" = {run['small_behind_over_alone']:.2f}x (goal <= 2x)"
    )
    print(
        f"  large job: alone {run['large_alone_s']} s, with the small one {pair_s['large_s']} s:"
        f" throughput {run['large_throughput_with_over_alone']:.3f} of alone (goal >= 0.90)"
    )
