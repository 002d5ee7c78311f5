"""The user's text in the CLI's messages is shown as written. rich reads "[/]" or "[bold]" as
markup: a row id, a column name or a job name holding one made `evalq run` fail with a
MarkupError traceback instead of naming the row. Run as a user runs it: `python -m evalq`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from evalq.client.output.terminal.tables import jobs_table
from evalq.core.counters import JobCounters
from evalq.core.models import JobConfig
from evalq.core.summary import build_summary

REPO = Path(__file__).resolve().parents[5]


def evalq(*args: str, redis_url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evalq", *args, "--redis-url", redis_url],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "200"},
    )


def hostile(folder: Path) -> Path:
    path = folder / "rows[b].jsonl"  # [b] is bold to rich
    rows = [
        {"id": "a[bold]", "prompt": "p", "response": "r", "category": "[/]"},
        {"id": "b[/]", "prompt": "q", "response": {"nested": 1}},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_a_dry_run_names_a_rejected_row_whose_id_looks_like_markup(
    tmp_path: Path, scratch_url: str
) -> None:
    done = evalq(
        "run", "pointwise", str(hostile(tmp_path)), "--template", "fluency", "--dry-run",
        redis_url=scratch_url,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "row b[/]: field 'response': must be text, got dict" in done.stdout
    assert "rows[b].jsonl" in done.stdout


def test_an_error_naming_a_column_that_looks_like_markup_is_printed_as_written(
    tmp_path: Path, scratch_url: str
) -> None:
    done = evalq(
        "run", "pointwise", str(hostile(tmp_path)), "--template", "fluency", "--dry-run",
        "--group-by", "[/]x", redis_url=scratch_url,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "error: --group-by '[/]x': no row has this column" in done.stderr


def test_the_jobs_table_shows_a_name_and_dataset_that_look_like_markup() -> None:
    from rich.console import Console

    named = {"name": "[bold]nightly[/]", "dataset": "/data/[b].jsonl", "metric": "pointwise"}
    config = JobConfig(job_id="j1", judge_model="m", rows_total=0, created_at=0, **named)
    summary = build_summary(config, JobCounters(status="finished"), {}, [], now=1.0)
    console = Console(width=120, record=True)
    console.print(jobs_table([summary]))
    text = console.export_text()
    assert "[bold]nightly[/]" in text and "[b].jsonl" in text
