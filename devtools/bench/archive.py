"""``scripts/bench --archive``: what the archive costs (gathering and writing a job's record,
its slowing of a job, reading many jobs back), measured in one run on one machine."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from devtools.bench.common import Stack, bench_parser, dataset, this_machine
from devtools.local import EVALQ, ROOT, PostgresServer, postgres_answers, start_postgres
from evalq.worker.archive.archive import Archive
from evalq.worker.jobs.archiving import collect
from evalq.worker.settings import Settings
from evalq.worker.store import Store

SYSTEM_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


def postgres_server(work: Path) -> PostgresServer:
    url = os.environ.get("EVALQ_TEST_POSTGRES_URL") or SYSTEM_POSTGRES
    if postgres_answers(url):
        return PostgresServer(url, port=5432)
    return start_postgres(work / "postgres")


def fresh_database(server: PostgresServer) -> str:
    import psycopg
    from sqlalchemy.engine import make_url

    from devtools.local import libpq_url

    name = f"evalq_bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(libpq_url(server.url), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
    return make_url(server.url).set(database=name).render_as_string(hide_password=False)


def drop_database(server: PostgresServer, url: str) -> None:
    import psycopg
    from sqlalchemy.engine import make_url

    from devtools.local import libpq_url

    name = make_url(url).database
    with psycopg.connect(libpq_url(server.url), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def archive_bytes(archive: Archive) -> int:
    """What the archive takes on disk: the SQLite file (its WAL checkpointed), or the
    PostgreSQL tables with their indexes and TOAST."""
    if archive.place.backend == "sqlite":
        with archive.engine.begin() as connection:
            connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        return Path(archive.place.url.removeprefix("sqlite:///")).stat().st_size
    with archive.engine.connect() as connection:
        query = sa.text(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind = 'r' AND n.nspname = 'public' AND c.relname LIKE 'archive_%'"
        )
        return int(connection.execute(query).scalar() or 0)


def median_s(argv: list[str], env: dict[str, str], runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.monotonic()
        done = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
        times.append(time.monotonic() - start)
        if done.returncode != 0:
            raise RuntimeError(f"{argv}: {done.stderr}")
    return round(statistics.median(times), 3)


def write_cost(store: Store, job_id: str, urls: dict[str, str]) -> dict[str, Any]:
    started = time.monotonic()
    record = collect(store, job_id, "bench")
    gathered_s = time.monotonic() - started
    out: dict[str, Any] = {"rows": len(record.rows), "gather_s": round(gathered_s, 2)}
    for backend, url in urls.items():
        archive = Archive.at(url)
        assert archive is not None
        archive.open()
        empty = archive_bytes(archive)
        started = time.monotonic()
        archive.write(record)
        written_s = time.monotonic() - started
        grown = archive_bytes(archive) - empty
        out[backend] = {
            "write_s": round(written_s, 2),
            "bytes": grown,
            "bytes_per_row": round(grown / len(record.rows)),
        }
    return out


def many_jobs(
    store: Store, redis_url: str, job_id: str, urls: dict[str, str], count: int
) -> dict[str, Any]:
    """`count` copies of a job in each archive, then the commands' wall times."""
    record = collect(store, job_id, "bench")
    out: dict[str, Any] = {"jobs": count, "rows_each": len(record.rows)}
    for backend, url in urls.items():
        archive = Archive.at(url)
        assert archive is not None
        ids = []
        for n in range(count):
            copy_id = uuid.uuid4().hex[:12]
            config = record.config.model_copy(
                update={"job_id": copy_id, "created_at": record.config.created_at + n}
            )
            summary = json.loads(record.summary_json) | {
                "job_id": copy_id,
                "created_at": config.created_at,
            }
            archive.write(replace(record, config=config, summary_json=json.dumps(summary)))
            ids.append(copy_id)
        env = dict(os.environ) | {"EVALQ_ARCHIVE_URL": url, "EVALQ_REDIS_URL": redis_url}
        out[backend] = {
            "jobs_s": median_s([*EVALQ, "jobs"], env),
            "jobs_limit_1000_s": median_s([*EVALQ, "jobs", "--limit", "1000"], env),
            "compare_s": median_s([*EVALQ, "compare", ids[0], ids[-1]], env),
        }
    return out


def wall_times(work: Path, args: Any) -> dict[str, Any]:
    """The same job with the archive on and off, taking turns on two stacks."""
    sqlite_url = f"sqlite:///{work / 'wall.sqlite'}"
    fake = ["--latency-ms", "0"]
    stacks = {
        "on": Stack(work / "on", fake, 1, args.concurrency, EVALQ_ARCHIVE_URL=sqlite_url),
        "off": Stack(work / "off", fake, 1, args.concurrency, EVALQ_ARCHIVE_URL="off"),
    }
    times: dict[str, list[float]] = {"on": [], "off": []}
    try:
        for n in range(args.repeat):
            for mode in ("on", "off") if n % 2 == 0 else ("off", "on"):
                path = dataset(work / f"wall-{mode}-{n}", args.wall_rows, f"w{mode}{n}", 1)
                wall, summary = stacks[mode].run(path, use_cache=False, poll_s=0.05)
                assert summary.status == "finished", summary.status
                times[mode].append(wall)
    finally:
        for stack in stacks.values():
            stack.close()
    on, off = statistics.median(times["on"]), statistics.median(times["off"])
    return {
        "rows": args.wall_rows,
        "runs_each": args.repeat,
        "on_s": [round(t, 2) for t in times["on"]],
        "off_s": [round(t, 2) for t in times["off"]],
        "median_on_over_off": round(on / off, 3),
    }


HELP = """``scripts/bench --archive``: what the archive costs, measured in one run on one machine.

1. A job of --rows rows (10,000 by default; one question each, every prompt its own, the fake
   judge at 0 ms) runs on a worker whose archive is SQLite. Its record is then gathered from
   Redis and written again from this process, to a fresh SQLite file and to a fresh PostgreSQL
   database (the server at EVALQ_TEST_POSTGRES_URL, else 127.0.0.1:5432, else a private one):
   the time to gather it, the time to write it, and the bytes the archive grew by, per row.
2. A job of --wall-rows rows, run --repeat times with the archive on (SQLite) and off, taking
   turns: the median wall times and their ratio (the goal: the archive slows a job by at most
   5%). The worker writes the job after it is marked finished, so the wall time a user waits
   does not include the write; what it could include is the extra work on the hot path.
3. 1,000 archived jobs (copies of a 50-row job's record) in each backend: the wall time of
   `evalq jobs`, `evalq jobs --limit 1000` and `evalq compare A B` on two of them, each the
   median of 5 runs of the real command.
"""


def main(argv: list[str]) -> int:
    parser = bench_parser(HELP, latency_ms=0, concurrency=16, out="bench-archive.json")
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--wall-rows", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=1_000)
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"machine": this_machine()}
    with tempfile.TemporaryDirectory(prefix="evalq-bench-archive-") as tmp:
        work = Path(tmp)
        server = postgres_server(work)
        databases = [fresh_database(server), fresh_database(server)]
        try:
            sqlite_url = f"sqlite:///{work / 'worker.sqlite'}"
            stack = Stack(
                work / "big",
                ["--latency-ms", "0"],
                1,
                args.concurrency,
                EVALQ_ARCHIVE_URL=sqlite_url,
            )
            try:
                store = Store.from_settings(
                    Settings(redis_url=stack.redis.url, archive_url=sqlite_url)
                )
                wall, summary = stack.run(
                    dataset(work / "big-data", args.rows, "big", 1), use_cache=False
                )
                results["job"] = {"rows": args.rows, "wall_s": round(wall, 1)}
                print(json.dumps(results["job"]), file=sys.stderr)
                results["write"] = write_cost(
                    store,
                    summary.job_id,
                    {
                        "sqlite": f"sqlite:///{work / 'write.sqlite'}",
                        "postgresql": databases[0],
                    },
                )
                print(json.dumps(results["write"]), file=sys.stderr)
                small = stack.run(dataset(work / "small-data", 50, "small", 1), use_cache=False)
                results["history"] = many_jobs(
                    store,
                    stack.redis.url,
                    small[1].job_id,
                    {"sqlite": f"sqlite:///{work / 'many.sqlite'}", "postgresql": databases[1]},
                    args.jobs,
                )
                print(json.dumps(results["history"]), file=sys.stderr)
            finally:
                stack.close()
            results["wall"] = wall_times(work, args)
        finally:
            for url in databases:
                drop_database(server, url)
            if server.proc is not None:
                server.close()
    text = json.dumps(results, indent=1)
    args.out.write_text(text + "\n")
    print(text)
    return 0
