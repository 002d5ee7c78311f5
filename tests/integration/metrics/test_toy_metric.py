"""A metric added from outside evalq: a package of its own, written here into a temporary folder,
declares a `toy` metric under the `evalq.metrics` entry point group (a .dist-info beside it, as
`pip install` would write), and runs end to end through the command line on real workers and
the fake server: run, status, results, report, compare. Nothing in evalq names it; if any part
of evalq still branched on the built-in metrics' names, some step here would miss the toy.

The toy is docs/architecture/adding-a-metric.md's, read from the page: it asks each judge to
rate a response's brevity 1-5 (the fake's simulated judge answers a schema with `rating` and
`explanation`) and declares its flag (--tone), the value it is compared on, how it reads human
labels, and one refusal; its row view is MetricBase's, from that value.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from devtools.local import ROOT
from evalq.examples.datasets import write_rows
from tests.support.cli import one_line_refusal, run_evalq_process
from tests.support.doc_examples import page_python_files
from tests.support.stack import stack

pytestmark = pytest.mark.integration

PAGE = ROOT / "docs" / "architecture" / "adding-a-metric.md"

ROWS = [
    {"id": "short", "prompt": "Name a primary colour.", "response": "Red."},
    {
        "id": "long",
        "prompt": "Name a primary colour.",
        "response": "There are several primary colours and one of them, among others, is red, "
        "which is a colour that many people like and see every day in many places.",
    },
    {"id": "mid", "prompt": "What is two plus two?", "response": "Two plus two is four."},
]


def write_toy_package(site: Path) -> Path:
    """The toy metric as an installed package would be: its modules, and a .dist-info naming
    its entry point (what `pip install` writes from a pyproject's entry-points table)."""
    for name, code in page_python_files(PAGE).items():
        if name.startswith("evalq_toy/"):
            (site / name).parent.mkdir(parents=True, exist_ok=True)
            (site / name).write_text(code)
    info = site / "evalq_toy-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: evalq-toy\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[evalq.metrics]\ntoy = evalq_toy:ENTRY\n")
    return site


def _ok(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`evalq ARGS` in a child process, which must succeed: the toy metric is found the way a
    user's installed package is, by a fresh interpreter reading its entry point (the commands
    build their flags from the metrics found at start-up)."""
    done = run_evalq_process(env, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_a_metric_from_another_package_runs_end_to_end_through_the_cli(tmp_path: Path) -> None:
    site = write_toy_package(tmp_path / "site")
    data = write_rows(tmp_path / "toy.jsonl", ROWS)
    terse = write_rows(tmp_path / "terse.jsonl", [{**r, "response": "Red."} for r in ROWS])
    with stack(tmp_path / "stack", PYTHONPATH=f"{site}{os.pathsep}{ROOT}") as s:
        env = s.env(COLUMNS="200")
        assert "--tone" in _ok(env, "run", "--help").stdout

        # Its refusals, and the others' flags refused by it, each in one line, exit 2.
        foreign = one_line_refusal(
            run_evalq_process(env, "run", "toy", str(data), "--validator", "batched")
        )
        assert foreign == (
            "error: toy does not take --validator (options of gecko-image, gecko-video, rubric); "
            "toy takes --human, --tone"
        )
        own = one_line_refusal(
            run_evalq_process(
                env, "run", "pointwise", str(data), "--template", "fluency", "--tone", "kind"
            )
        )
        assert own.startswith("error: pointwise does not take --tone (options of toy); ")
        harsh = ["--tone", "harsh", "--judge-model", "gemini-2.0-flash-lite"]
        refused = one_line_refusal(run_evalq_process(env, "run", "toy", str(data), *harsh))
        assert refused == "error: toy: --tone harsh needs a full judge, not gemini-2.0-flash-lite"

        # run
        ran = json.loads(_ok(env, "run", "toy", str(data), "--wait", "--json").stdout)
        job = ran["job_id"]
        assert ran["metric"] == "toy" and ran["rows_scored"] == len(ROWS)
        other = json.loads(
            _ok(env, "run", "toy", str(terse), "--tone", "harsh", "--wait", "--json").stdout
        )["job_id"]

        # status
        status = _ok(env, "status", job).stdout
        assert "toy" in status and "simulated" in status
        assert json.loads(_ok(env, "status", job, "--json").stdout)["metric_summary"][
            "mean_brevity"
        ] == pytest.approx(ran["metric_summary"]["mean_brevity"])

        # results: every row rated by the simulated judge, its score the rating on [0, 1]
        results = tmp_path / "results.jsonl"
        _ok(env, "results", job, "--out", str(results))
        rows = [json.loads(line) for line in results.read_text().splitlines()]
        assert sorted(r["id"] for r in rows) == sorted(r["id"] for r in ROWS)
        for row in rows:
            rating = row["details"]["rating"]
            assert 1 <= rating <= 5 and row["score"] == pytest.approx((rating - 1) / 4)
            assert row["simulated"] and "[simulated judge]" in row["details"]["explanations"][0]
            assert row["inputs"]["response"] == next(
                r["response"] for r in ROWS if r["id"] == row["id"]
            )

        # report: the toy's own view of each row
        html = tmp_path / "report.html"
        _ok(env, "report", job, "--html", str(html))
        page = html.read_text()
        for row in rows:
            assert f"brevity rating {row['details']['rating']:g} of 5" in page
        assert "There are several primary colours" in page and "[simulated judge]" in page

        # compare: on the value the toy declares
        compared = json.loads(_ok(env, "compare", job, other, "--json").stdout)
        assert compared["value"]["label"] == "brevity rating (1-5)"
        (pair,) = compared["pairs"]
        assert pair["counts"]["paired"] == len(ROWS)
        _ok(env, "results", other, "--out", str(tmp_path / "other.jsonl"))
        other_rows = [json.loads(x) for x in (tmp_path / "other.jsonl").read_text().splitlines()]
        mine = {r["id"]: r["details"]["rating"] for r in rows}
        theirs = {r["id"]: r["details"]["rating"] for r in other_rows}
        diffs = [mine[i] - theirs[i] for i in mine]
        assert pair["overall"]["mean_diff"] == pytest.approx(sum(diffs) / len(diffs))
