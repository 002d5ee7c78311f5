"""The demo: evaluate the example Gecko image dataset end to end, then stop what it started.

Uses Redis from EVALQ_REDIS_URL (or the default URL) when it answers, else a private
redis-server; uses Gemini when GEMINI_API_KEY / GOOGLE_API_KEY (or Vertex) is set, else the
fake server's simulated judge; starts one worker and Flower for the run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

# devtools/ is the checkout's tooling, not installed: `python scripts/demo.py` finds it here.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from devtools.local import (
    EVALQ,
    ROOT,
    WorkerPool,
    evalq_env,
    free_port,
    redis_answers,
    start_fake_gemini,
    start_flower,
    start_redis,
    stop,
)
from evalq.client import Client
from evalq.client.cli.attach import attached
from evalq.client.cli.submit import wait_with_progress
from evalq.client.output.formats import money
from evalq.client.output.terminal.summary import print_summary
from evalq.core.dry_report import DryRunReport
from evalq.examples.gecko import write_gecko_image_example
from evalq.worker.settings import Settings

DRIFTING_JUDGE = "fake-drift-10pct"  # the fake judge that changes 10% of verdicts on purpose
console = Console()


def rows_table(rows: list[dict[str, Any]]) -> Table:
    table = Table(title="per-row results")
    table.add_column("row", overflow="fold")  # ids are long: folded, never cut
    for name in ("prompt", "status", "score", "answers as expected"):
        table.add_column(name)
    for row in rows:
        score = "n/a" if row["score"] is None else f"{row['score']:.2f}"
        answers = " ".join(
            f"{'✓' if q['result'] == 1 else '✗' if q['result'] == 0 else '?'}"
            for q in row["questions"]
        )
        table.add_row(row["id"], row["prompt"], row["status"], score, answers)
    return table


def other_metrics(client: Client, env: dict[str, str], folder: Path) -> None:
    """Every other metric on its example dataset, submitted together, summarised in one table."""
    from evalq.examples.grounding import write_groundedness_example
    from evalq.examples.ratings import (
        write_pairwise_example,
        write_pointwise_example,
        write_rank_example,
    )
    from evalq.examples.text_rubrics import write_rubric_example
    from evalq.examples.video import write_gecko_video_example

    runs: list[tuple[str, Path, dict[str, Any], str]] = [
        (
            "gecko-video",
            write_gecko_video_example(folder / "video"),
            {},
            "matching vs near-miss clips",
        ),
        (
            "groundedness",
            write_groundedness_example(folder / "grounding"),
            {},
            "FACTS-style sentence labels",
        ),
        (
            "pointwise",
            write_pointwise_example(folder / "pointwise"),
            {"template": "summarization_quality"},
            "1-5 rubric",
        ),
        ("pairwise", write_pairwise_example(folder / "pairwise"), {}, "A/SAME/B, both orders"),
        (
            "rubric",
            write_rubric_example(folder / "rubric"),
            {"candidates": ["careful", "careless"]},
            "pass/fail tests per prompt",
        ),
        (
            "rank",
            write_rank_example(folder / "rank"),
            {"candidates": ["terse", "moderate", "cited"]},
            "Bradley-Terry",
        ),
    ]
    console.print("\n[bold]the other metrics, each on its example dataset[/]")
    jobs = [
        (metric, client.submit(metric, path, options=options).job_id, what)
        for metric, path, options, what in runs
    ]
    table = Table(
        "metric",
        "job",
        "rows",
        "mean score",
        "what it shows",
        title="other metrics (simulated judge)",
    )
    grounded_job = next(job_id for metric, job_id, _ in jobs if metric == "groundedness")
    for metric, job_id, what in jobs:
        s = client.wait(job_id, timeout_s=600)
        mean = "n/a" if s.mean_score is None else f"{s.mean_score:.3f}"
        figure = what
        if metric == "rank":
            figure = f"ranking {s.metric_summary.get('ranking')}"
        elif metric == "pairwise":
            rates = s.metric_summary.get("win_rates") or {}
            figure = "rows won: " + " · ".join(
                f"{side} {share:.2f}" for side, share in rates.items() if share is not None
            )
        elif metric == "pointwise":
            rating = s.metric_summary.get("mean_rating")
            figure = "mean rating n/a" if rating is None else f"mean rating {rating:.2f} of 5"
        elif metric == "rubric":
            figure = "tests passed: " + " · ".join(
                f"{name} {c.mean_score:.2f}"
                for name, c in s.candidates.items()
                if c.mean_score is not None
            )
        elif metric == "groundedness":
            responses = s.metric_summary.get("responses", {})
            figure = (
                f"{s.rows_scored} rows judged; responses given {responses.get('given')}, "
                f"generated {responses.get('generated')} ({s.candidate_calls} new calls, rest cached)"
            )
        table.add_row(metric, job_id, f"{s.rows_done}/{s.rows_total}", mean, str(figure))
    console.print(table)
    text_report(env, grounded_job, folder)


def compare_models(client: Client, env: dict[str, str], folder: Path) -> None:
    """Two "models" on the same prompts: `exact` draws what each prompt asks, `sloppy` misses
    a detail (a colour, a count, a position). One job with a media column per model
    (`--candidates exact,sloppy`: each prompt's rubric written once for both), then
    `evalq compare JOB`."""
    from evalq.examples.comparison import MODELS, write_comparison_example

    example = write_comparison_example(folder / "compare")
    console.print(f"\n$ evalq run gecko-image {example.candidates} --candidates {','.join(MODELS)}")
    job_id = client.submit(
        "gecko-image", example.candidates, options={"candidates": list(MODELS)}
    ).job_id
    summary = client.wait(job_id)
    for model, figures in summary.candidates.items():
        mean = "n/a" if figures.mean_score is None else f"{figures.mean_score:.3f}"
        console.print(f"model {model}: mean {mean} over {figures.rows} prompts")
    report = folder / f"compare-{job_id}.html"
    console.print(f"\n$ evalq compare {job_id} --html {report}")
    subprocess.run(
        [*EVALQ, "compare", job_id, "--html", str(report)], cwd=ROOT, env=env, check=True
    )


def compare_ratings(client: Client, env: dict[str, str], folder: Path) -> None:
    """A text metric compared: each source's faithful and poor summary as two "models" of one
    pointwise job (`--candidates faithful,poor`), then `evalq compare JOB`, which pairs the
    rows by prompt and compares their mean ratings."""
    from evalq.examples.ratings import POINTWISE_CANDIDATES, write_pointwise_candidates_example

    dataset = write_pointwise_candidates_example(folder / "pointwise")
    names = ",".join(POINTWISE_CANDIDATES)
    console.print(
        f"\n$ evalq run pointwise {dataset.name} --template summarization_quality "
        f"--candidates {names}"
    )
    options = {"template": "summarization_quality", "candidates": list(POINTWISE_CANDIDATES)}
    job_id = client.submit("pointwise", dataset, options=options).job_id
    client.wait(job_id, timeout_s=600)
    report = folder / f"compare-pointwise-{job_id}.html"
    console.print(f"$ evalq compare {job_id} --html {report}")
    subprocess.run(
        [*EVALQ, "compare", job_id, "--html", str(report)], cwd=ROOT, env=env, check=True
    )


def calibrate_step(env: dict[str, str], folder: Path) -> None:
    """Which judge setup agrees with the raters: the calibration example's summaries carry a
    rater's 1-5 rating, and `evalq calibrate` runs the two setups side by side and ranks
    them (the labels follow what the judge weighs under summarization_quality, not fluency)."""
    from evalq.examples.calibration import (
        AGREEING_SETUP,
        DISAGREEING_SETUP,
        HUMAN_COLUMN,
        write_calibration_example,
    )

    dataset = write_calibration_example(folder / "calibration")
    setups = [
        f"{name}:" + ",".join(f"{k}={v}" for k, v in keywords.items())
        for name, keywords in (AGREEING_SETUP, DISAGREEING_SETUP)
    ]
    console.print(f"\n$ evalq calibrate {dataset.name} --human {HUMAN_COLUMN} \\")
    for i, setup in enumerate(setups):
        console.print(f"    --setup {setup}" + (" \\" if i < len(setups) - 1 else ""))
    args = [*EVALQ, "calibrate", str(dataset), "--human", HUMAN_COLUMN]
    for setup in setups:
        args += ["--setup", setup]
    subprocess.run(args, cwd=ROOT, env={**env, "COLUMNS": "80"}, check=True)


def text_report(env: dict[str, str], job_id: str, folder: Path) -> None:
    """A text metric's HTML report: the texts judged, each verdict and its explanation."""
    report = folder / f"report-groundedness-{job_id}.html"
    console.print(f"\n$ evalq report {job_id} --html {report}")
    subprocess.run([*EVALQ, "report", job_id, "--html", str(report)], cwd=ROOT, env=env, check=True)


def read_again(redis_url: str, default_url: str, *, kept_running: bool) -> str:
    """What a new shell needs in front of `evalq status JOB` to read the job again: nothing
    when the demo used the Redis evalq finds by default, or once the job is in the archive
    (the default SQLite file, which a new shell reads too); else the private Redis's URL,
    which lives only as long as the demo's processes (--keep)."""
    if redis_url == default_url or not kept_running:
        return ""
    return f"EVALQ_REDIS_URL={redis_url} "


def flower_line(port: int, *, keep: bool) -> str:
    """Where Flower is; without --keep, that it goes with the demo and how to keep it."""
    until = "" if keep else " (until the demo ends; `./scripts/demo --keep` keeps it)"
    return f"flower: http://127.0.0.1:{port}{until}"


def keep_running(
    procs: list[subprocess.Popen[Any]], stop_script: Path, redis_url: str, gemini_url: str | None
) -> None:
    """--keep: leave the processes running and write the one command that stops them."""
    pids = " ".join(str(p.pid) for p in procs if p.poll() is None)
    stop_script.write_text(
        "#!/bin/sh\n# Stops what `./scripts/demo --keep` left running.\n"
        f"kill {pids} 2>/dev/null\necho 'stopped the demo (pids {pids})'\nrm -f \"$0\"\n",
        encoding="utf-8",
    )
    stop_script.chmod(0o755)
    console.print(
        f"\nleft running (pids {pids}): Redis at {redis_url}, the workers, Flower", end=""
    )
    console.print(f", the fake server at {gemini_url}" if gemini_url else "")
    console.print(f"stop them all: {stop_script}", soft_wrap=True)  # a path, whole
    if gemini_url:
        console.print(
            f"more jobs on them: EVALQ_REDIS_URL={redis_url} EVALQ_GEMINI_BASE_URL={gemini_url} evalq run ...",
            soft_wrap=True,
        )


def regrade_step(env: dict[str, str], job_id: str, rows: int, folder: Path) -> None:
    """The image job judged again from its archived inputs by a judge that drifts on purpose
    (`evalq regrade`), then `evalq drift` with the old judge retested on every row for its own
    noise: the report's one-line verdict, and the page with the changed rows side by side."""
    console.print(f"\n$ evalq regrade {job_id} --judge {DRIFTING_JUDGE} --wait --json")
    done = subprocess.run(
        [*EVALQ, "regrade", job_id, "--judge", DRIFTING_JUDGE, "--wait", "--json"],
        cwd=ROOT, env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip
    new_job = json.loads(done.stdout)["job_id"]
    console.print(f"job {new_job}: the same rows and questions, judged by {DRIFTING_JUDGE}")
    page = folder / f"drift-{job_id}-{new_job}.html"
    command = ["drift", job_id, new_job, "--retest", str(rows), "--html", str(page)]
    console.print(f"$ evalq {' '.join(command)}")
    report = subprocess.run(
        [*EVALQ, *command], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    )
    verdict = next(
        (line for line in report.stdout.splitlines() if "noise" in line), report.stdout.strip()
    )
    console.print(verdict.strip(), soft_wrap=True)


def dry_run_line(plan: DryRunReport) -> str:
    """The plan in a line; a plan with no call to make says why it costs nothing."""
    said = "dry run first (nothing enqueued, no model called): "
    if plan.calls_total == 0:
        return said + "no call to make, every answer is in the call cache: the job costs nothing"
    return (
        f"{said}{plan.calls_total} calls, {plan.counts.get('rubrics_to_write', 0)} rubrics to "
        f"write, about {money(plan.cost_usd)} (an estimate at prices of {plan.price_date})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", type=int, default=1, help="worker processes to start")
    parser.add_argument("--flower-port", type=int, default=5555)
    parser.add_argument(
        "--keep-dir", type=Path, default=ROOT / ".evalq" / "demo", help="where the example data go"
    )
    parser.add_argument(
        "--only-image", action="store_true", help="skip the other metrics' examples"
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="leave Redis, the workers, the fake server and Flower running, and say how to stop "
        "them (everything printed for later then works as printed)",
    )
    args = parser.parse_args()

    settings = Settings()
    work = Path(tempfile.mkdtemp(prefix="evalq-demo-"))
    if args.keep:  # the logs outlive the demo with the processes writing them
        work = args.keep_dir / "run"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
    procs: list[subprocess.Popen[Any]] = []
    pool: WorkerPool | None = None
    kept = False
    try:
        redis_url = settings.redis_url
        if redis_answers(redis_url):
            console.print(f"redis: using {redis_url}")
        else:
            server = start_redis(work / "redis")
            assert server.proc is not None
            procs.append(server.proc)
            redis_url = server.url
            console.print(
                f"redis: nothing answered at {settings.redis_url}; started a private redis-server at {redis_url}"
            )
        gemini_url = None
        if settings.uses_fake_judge:
            fake = start_fake_gemini(log=work / "fake-gemini.log" if args.keep else None)
            procs.append(fake.proc)
            gemini_url = fake.url
            console.print(
                f"judge: no GEMINI_API_KEY set; fake Gemini server (SIMULATED judge) at {gemini_url}"
            )
        else:
            console.print(f"judge: Gemini, model {settings.judge_model}")
        env = evalq_env(redis_url, gemini_url)
        pool = WorkerPool(env, work / "logs")
        for i in range(args.workers):
            pool.start(name=f"demo{i}")
        console.print(f"workers: {args.workers} started (logs in {work / 'logs'})")
        flower_port = args.flower_port if args.flower_port else free_port()
        procs.append(start_flower(env, flower_port, work / "logs" / "flower.log"))
        console.print(flower_line(flower_port, keep=args.keep))

        dataset = write_gecko_image_example(args.keep_dir)
        console.print(f"dataset: {dataset} (each image with a matching and a near-miss prompt)\n")
        client = Client(Settings(redis_url=redis_url, gemini_base_url=gemini_url))
        plan = client.plan("gecko-image", dataset)
        console.print(dry_run_line(plan))
        submitted = client.submit("gecko-image", dataset)
        job_id = submitted.job_id
        with attached(job_id) as ctrl_c:  # Ctrl-C leaves the wait, as `run --wait` does
            console.print(f"job {job_id}: {submitted.dataset.total} rows enqueued")
            summary = wait_with_progress(client, job_id, submitted.dataset.total, stop=ctrl_c)
        print_summary(summary)
        out = subprocess.run(
            [*EVALQ, "results", job_id, "--format", "jsonl"],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        rows = [json.loads(line) for line in out.stdout.splitlines()]
        console.print(rows_table(rows))
        pairs = [
            (r, next(x for x in rows if x["id"] == r["id"].replace("-match", "-near-miss")))
            for r in rows
            if r["id"].endswith("-match")
        ]
        scored = [(m, n) for m, n in pairs if m["score"] is not None and n["score"] is not None]
        better = sum(1 for m, n in scored if m["score"] > n["score"])
        if len(scored) < len(pairs):  # an unscored row is not a 0: leave such pairs out, and say so
            console.print(
                f"{len(pairs) - len(scored)} pair(s) left out: a row in them has no score"
            )
        pairs = scored
        console.print(
            f"\nmatching prompt scored higher than its near-miss in {better} of {len(pairs)} pairs"
        )
        report = args.keep_dir / f"report-{job_id}.html"
        subprocess.run(
            [*EVALQ, "report", job_id, "--html", str(report)], cwd=ROOT, env=env, check=True
        )
        again = read_again(redis_url, settings.redis_url, kept_running=args.keep)
        console.print(  # one command a line, each whole: they are for copying
            f"read it again any time:\n  {again}evalq status {job_id}\n  {again}evalq results "
            f"{job_id} --format csv\n  HTML report: {report}",
            soft_wrap=True,
        )
        if not args.only_image:
            compare_models(client, env, args.keep_dir)
            compare_ratings(client, env, args.keep_dir)
            other_metrics(client, env, args.keep_dir)
            calibrate_step(env, args.keep_dir)
            if settings.uses_fake_judge:
                regrade_step(env, job_id, submitted.dataset.total, args.keep_dir)
        if args.keep:
            running = [*(pool.procs if pool else []), *procs]
            keep_running(running, args.keep_dir / "stop", redis_url, gemini_url)
            kept = True
        console.print(
            "evalq itself is in .venv/bin: `source .venv/bin/activate` puts `evalq` on your PATH"
        )
        console.print(  # the seeds' platform: where the same steps go on Vertex AI
            "on Vertex AI: GOOGLE_GENAI_USE_VERTEXAI=true, GOOGLE_CLOUD_PROJECT and "
            "GOOGLE_CLOUD_LOCATION, credentials from `gcloud auth application-default login`; "
            "batch mode adds --vertex-batch-prefix gs://BUCKET/PATH (docs/getting-started/vertex-ai.md)"
        )
        return 0
    finally:
        if not kept:
            if pool is not None:
                pool.stop_all()
            for proc in reversed(procs):
                stop(proc)
            if not args.keep:
                shutil.rmtree(work, ignore_errors=True)
            console.print("stopped everything the demo started")


if __name__ == "__main__":
    sys.exit(main())
