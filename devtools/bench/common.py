"""What the benchmarks share: the options of the stack they run, synthetic shape datasets, a
local stack started from devtools.local, the fake server's /stats, the asyncio baseline's
judge, and a description of the machine the figures come from."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import platform
import time
import urllib.request
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from devtools.local import WorkerPool, evalq_env, start_fake_gemini, start_redis, stop
from evalq.client import Client
from evalq.worker.settings import Settings


def bench_parser(
    doc: str | None,
    *,
    prog: str | None = None,
    latency_ms: int,
    concurrency: int | None,
    concurrency_help: str | None = None,
    out: str,
) -> argparse.ArgumentParser:
    """A benchmark's command line, `doc` (its HELP text, shown as written) as the help, with
    the options of the stack every benchmark runs (the fake's latency, a worker's slots unless
    the benchmark has its own setups, the results' file) and their defaults for this benchmark;
    it adds its own options after."""
    parser = argparse.ArgumentParser(
        prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--latency-ms", type=int, default=latency_ms)
    if concurrency is not None:  # None: the benchmark runs setups of its own widths
        parser.add_argument("--concurrency", type=int, default=concurrency, help=concurrency_help)
    parser.add_argument("--out", type=Path, default=Path(out))
    return parser


COLORS = ["red", "green", "blue", "yellow", "purple", "orange", "pink", "brown"]
SHAPES = ["circle", "square", "triangle"]


def own_questions(tag: str, row: int, color: str, shape: str, count: int) -> list[dict[str, str]]:
    """A row's own yes/no questions, distinct across rows so no judge call is shared."""
    return [
        {"question": f"Is there a {color} {shape} (check {k} of {tag} {row})?", "answer": "yes"}
        for k in range(count)
    ]


def dataset(folder: Path, rows: int, tag: str, questions_per_row: int = 0) -> Path:
    """Rows of synthetic shape images, each prompt distinct (no rubric is shared across rows).
    With `questions_per_row` every row brings its own questions, so no rubric is generated."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(rows):
        color, shape = COLORS[i % len(COLORS)], SHAPES[(i // len(COLORS)) % len(SHAPES)]
        path = folder / f"{color}-{shape}.png"
        if not path.exists():
            image = Image.new("RGB", (128, 128), "white")
            draw = ImageDraw.Draw(image)
            if shape == "circle":
                draw.ellipse((32, 32, 96, 96), fill=color)
            elif shape == "square":
                draw.rectangle((32, 32, 96, 96), fill=color)
            else:
                draw.polygon([(64, 28), (100, 96), (28, 96)], fill=color)
            buf = io.BytesIO()
            image.save(buf, format="PNG")
            path.write_bytes(buf.getvalue())
        record: dict[str, Any] = {
            "id": f"{tag}-{i}",
            "prompt": f"a {color} {shape} (variant {tag} {i})",
            "image": path.name,
        }
        if questions_per_row:
            record["questions"] = own_questions(tag, i, color, shape, questions_per_row)
        lines.append(json.dumps(record))
    out = folder / f"{tag}.jsonl"
    out.write_text("\n".join(lines) + "\n")
    return out


def stats(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url + "/stats", timeout=10) as response:
        return dict(json.loads(response.read()))


class Stack:
    def __init__(
        self,
        work: Path,
        fake_args: list[str],
        workers: int,
        concurrency: int,
        worker_options: dict[str, str] | None = None,
        **env: str,
    ) -> None:
        """`worker_options` go to WorkerPool.start as they are (e.g. a pool, where it takes one)."""
        self.redis = start_redis(work / f"redis-{time.monotonic_ns()}")
        self.fake = start_fake_gemini(*fake_args)
        self.pool = WorkerPool(evalq_env(self.redis.url, self.fake.url, **env), work / "logs")
        for _ in range(workers):
            self.pool.start(concurrency=concurrency, **(worker_options or {}))
        self.client = Client(
            Settings(redis_url=self.redis.url, gemini_base_url=self.fake.url, api_key=None)
        )

    def run(self, path: Path, *, poll_s: float = 0.2, **submit: Any) -> tuple[float, Any]:
        """Submit and wait; the wall time includes up to one `poll_s` after the job ends."""
        start = time.monotonic()
        job = self.client.submit("gecko-image", path, **submit).job_id
        summary = self.client.wait(job, timeout_s=1800, poll_s=poll_s)
        return time.monotonic() - start, summary

    def close(self) -> None:
        self.pool.stop_all()
        stop(self.fake.proc)
        if self.redis.proc is not None:
            stop(self.redis.proc)


class AsyncJudge:
    """What a user would write instead of evalq: google-genai's async client behind a semaphore
    of C calls, in one process. Both benchmarks' baselines ask through it."""

    def __init__(self, url: str, concurrency: int) -> None:
        from google import genai
        from google.genai import types

        self.types = types
        self.client = genai.Client(api_key="offline", http_options=types.HttpOptions(base_url=url))
        self.semaphore = asyncio.Semaphore(concurrency)
        self.calls = 0

    async def ask(self, prompt: str, image: bytes, schema: Any) -> str:
        types = self.types
        async with self.semaphore:
            self.calls += 1
            reply = await self.client.aio.models.generate_content(
                model="gemini-2.5-flash",
                contents=[
                    types.Content(
                        role="user",
                        parts=[
                            types.Part.from_bytes(data=image, mime_type="image/png"),
                            types.Part.from_text(text=prompt),
                        ],
                    )
                ],
                config=types.GenerateContentConfig(
                    response_mime_type="application/json", response_schema=schema, temperature=0
                ),
            )
            return reply.text or ""


def this_machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_avg_1m": round(os.getloadavg()[0], 2),  # other work on the machine skews figures
    }
