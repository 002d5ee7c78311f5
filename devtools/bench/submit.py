"""``scripts/bench --submit [--rows N]``: how long submitting a large job takes, and what it
leaves in Redis and in the broker."""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

from devtools.local import start_redis, stop
from evalq.client import Client, submit
from evalq.worker.dispatch.queues import QUEUE_ROWS
from evalq.worker.settings import Settings


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


HELP = """``scripts/bench --submit [--rows N]``: how long submitting a large job takes, and what it
leaves in Redis and in the broker (the broker holds the turns' window, the rows wait in Redis).

Tiny pointwise rows (an id, a prompt, a response) on a private redis-server with no worker, so
the window is the least one and nothing is consumed. Times are wall and CPU of this process;
the loading (every row checked) and the storing are timed apart.
"""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="scripts/bench --submit", description=HELP)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--out", type=Path, default=Path("bench-submit.json"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="evalq-submit-") as tmp:
        folder = Path(tmp)
        data = folder / "d.jsonl"
        with data.open("w") as out:
            for i in range(args.rows):
                out.write(json.dumps({"id": f"r{i}", "prompt": f"q{i}", "response": f"a{i}"}))
                out.write("\n")
        server = start_redis(folder / "redis")
        try:
            settings = Settings(redis_url=server.url, api_key=None)
            client = Client(settings)
            r = server.client()
            memory_before = int(r.info("memory")["used_memory"])
            wall, cpu = time.monotonic(), cpu_s()
            prepared = submit.prepare(
                settings, "pointwise", data, {"options": {"template": "fluency"}}
            )
            loaded_wall, loaded_cpu = time.monotonic() - wall, cpu_s() - cpu
            submit.store_and_enqueue(
                client.job_control, client.app, prepared.config, prepared.dataset
            )
            total_wall, total_cpu = time.monotonic() - wall, cpu_s() - cpu
            grown = int(r.info("memory")["used_memory"]) - memory_before
            results = {
                "rows": args.rows,
                "dataset_bytes": data.stat().st_size,
                "load_wall_s": round(loaded_wall, 1),
                "load_cpu_s": round(loaded_cpu, 1),
                "store_wall_s": round(total_wall - loaded_wall, 1),
                "submit_wall_s": round(total_wall, 1),
                "submit_cpu_s": round(total_cpu, 1),
                "redis_bytes": grown,
                "redis_bytes_per_row": round(grown / args.rows, 1),
                "broker_messages": int(r.llen(QUEUE_ROWS)),
                "rows_waiting": client.job_reads.turn_state(prepared.config.job_id).waiting,
            }
        finally:
            if server.proc is not None:
                stop(server.proc)
    print(
        f"\nsubmit of {results['rows']} rows ({results['dataset_bytes'] / 2**20:.0f} MiB of "
        f"JSONL): {results['submit_wall_s']} s wall ({results['load_wall_s']} s loading and "
        f"checking, {results['store_wall_s']} s storing), {results['submit_cpu_s']} s CPU; Redis "
        f"+{grown / 2**20:.0f} MiB ({results['redis_bytes_per_row']} bytes a row); "
        f"{results['broker_messages']} messages in the broker, {results['rows_waiting']} rows "
        "waiting for turns"
    )
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0
