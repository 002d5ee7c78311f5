"""`evalq calibrate` on real workers and the fake server's simulated judge, on the example
built to agree with it in a known way (evalq.examples.calibration): the rater's labels follow
what the judge weighs under `summarization_quality` and not what it weighs under `fluency`,
so calibrate must rank the first setup above the second. The demo's calibrate step runs the
two setups once for the module, as the demo runs them (`evalq calibrate` in a process of its
own, 80 columns); its jobs are read back with --job, and through the Python API, which also
runs the setups again on a DataFrame: the same figures each way, each setup's Spearman checked
against scipy on the rows the test reads back itself."""

from __future__ import annotations

import io
import json
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest
from rich.console import Console
from scipy import stats as sp

import evalq
from evalq.client import Client
from evalq.examples.calibration import HUMAN_COLUMN, write_calibration_example
from tests.conftest import FakeGemini, RedisServer, WorkerPool, worker_env
from tests.support.cli import evalq_ok

pytestmark = pytest.mark.integration

SETUPS = ("summary:template=summarization_quality", "fluency:template=fluency")


def labelled_spearman(client: Any, job_id: str) -> tuple[float, int]:
    """Spearman of the job's row scores against the example's labels, computed here from
    the rows read back (rows without a label or a score left out)."""
    pairs = [
        (r.score, float(r.extra[HUMAN_COLUMN]))
        for r in client.results(job_id)
        if r.score is not None and r.extra.get(HUMAN_COLUMN) is not None
    ]
    scores, labels = zip(*pairs, strict=True)
    return float(sp.spearmanr(scores, labels).statistic), len(pairs)


@dataclass(frozen=True)
class DemoStep:
    data: Path  # the calibration example it wrote
    echoed: str  # the command line the step shows
    table: str  # what `evalq calibrate` printed on stdout
    jobs: dict[str, str]  # setup name -> the job it ran

    @property
    def output(self) -> str:
        return self.echoed + self.table


@pytest.fixture(scope="module")
def demo_step(
    settings: Any,
    redis_server: RedisServer,
    fake_gemini: FakeGemini,
    workers: WorkerPool,
    tmp_path_factory: pytest.TempPathFactory,
) -> DemoStep:
    """scripts/demo.py's calibrate_step, run as the demo runs it, what it prints kept: its
    console on a buffer 80 columns wide, and `evalq calibrate` in a process of its own with
    its output piped (no terminal, so nothing styled)."""
    from tests.unit.scripts.test_demo_output import demo

    fake_gemini.script([])
    client = Client(settings)
    module: Any = demo()  # scripts/demo.py, loaded as a module of its own
    echoed = io.StringIO()
    module.console = Console(file=echoed, width=80, force_terminal=False)
    ran: list[subprocess.CompletedProcess[str]] = []

    def run(args: Sequence[str], *, check: bool, **options: Any) -> Any:
        done = subprocess.run(args, capture_output=True, text=True, check=False, **options)
        assert not check or done.returncode == 0, done.stdout + done.stderr
        ran.append(done)
        return done

    module.subprocess = SimpleNamespace(run=run)
    before = set(client.job_reads.job_ids(limit=0))
    folder = tmp_path_factory.mktemp("demo")
    module.calibrate_step(worker_env(redis_server.url, fake_gemini.url), folder)
    (calibrated,) = ran
    made = [job for job in client.job_reads.job_ids(limit=0) if job not in before]
    return DemoStep(
        data=folder / "calibration" / "calibration.jsonl",
        echoed=echoed.getvalue(),
        table=calibrated.stdout,
        jobs={str(client.summary(job).name): job for job in made},
    )


def test_calibrate_ranks_the_setup_the_labels_follow(
    client: Any,
    settings: Any,
    fake: FakeGemini,
    redis_server: RedisServer,
    demo_step: DemoStep,
    tmp_path: Path,
) -> None:
    env = worker_env(redis_server.url, fake.url, COLUMNS="80")
    assert set(demo_step.jobs) == {"summary", "fluency"}  # each job named by its setup
    by_setup = {name: demo_step.jobs[name] for name in ("summary", "fluency")}  # in rank order
    jobs = [f"--job={name}={job}" for name, job in by_setup.items()]
    html = tmp_path / "calibrate.html"
    args = ["calibrate", "--human", HUMAN_COLUMN, *jobs, "--json", "--html", str(html)]
    ran = json.loads(evalq_ok(env, *args).stdout)

    summary, fluency = ran["setups"]
    assert (summary["name"], fluency["name"]) == ("summary", "fluency")
    for setup in (summary, fluency):
        rho, used = labelled_spearman(client, setup["job_id"])
        assert setup["spearman"]["value"] == pytest.approx(rho)
        assert setup["rows_used"] == used == 16
        assert setup["rows_left_out"] == {"no label": 1}
        assert setup["rows_left_out_ids"] == {"no label": ["lighthouses-unrated"]}
        assert setup["cost_kind"] == "estimate"  # simulated: priced, nothing billed
        assert client.summary(setup["job_id"]).name == setup["name"]
    assert summary["spearman"]["value"] > 0.8 > fluency["spearman"]["value"]
    assert summary["pairwise_accuracy"]["value"] > fluency["pairwise_accuracy"]["value"]
    (difference,) = ran["differences"]
    assert (difference["a"], difference["b"]) == ("summary", "fluency")
    assert difference["spearman_difference"]["value"] == pytest.approx(
        summary["spearman"]["value"] - fluency["spearman"]["value"]
    )
    assert difference["significant"] and difference["p_holm"] < 0.05
    assert ran["most_agreeing"] == "summary" and ran["simulated"]
    assert ran["best_per_cost"] == "summary"
    page = html.read_text(encoding="utf-8")
    assert "summary" in page and "fluency" in page and "SIMULATED" in page

    # The jobs read back print what the run that made them printed, within 80 columns.
    table = evalq_ok(env, "calibrate", "--human", HUMAN_COLUMN, *jobs).stdout
    assert table == demo_step.table
    assert max(len(line) for line in table.splitlines()) <= 80, table
    assert "Most agreeing: summary" in table
    assert "1 no label (lighthouses-unrated)" in " ".join(table.split())

    # The API: from the jobs, and running the setups on a DataFrame (from the cache).
    read = evalq.calibrate(human=HUMAN_COLUMN, jobs=by_setup, settings=settings)
    assert read.to_dict() == ran
    assert list(read.setups["setup"]) == ["summary", "fluency"]
    assert read.setups.loc[0, "spearman"] == pytest.approx(summary["spearman"]["value"])
    assert list(read.left_out["id"]) == ["lighthouses-unrated"] * 2
    frame = pd.read_json(demo_step.data, lines=True)
    run = evalq.calibrate(
        frame,
        human=HUMAN_COLUMN,
        setups={
            "summary": {"template": "summarization_quality"},
            "fluency": {"template": "fluency"},
        },
        settings=settings,
        base_dir=demo_step.data.parent,
    )
    assert run.most_agreeing == "summary"
    assert run.setups["spearman"].tolist() == pytest.approx(read.setups["spearman"].tolist())
    assert run.setups.loc[0, "rows_left_out"] == 1


def test_calibrate_refuses_a_column_no_row_has(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    from tests.support.cli import run_evalq

    data = write_calibration_example(tmp_path / "example")
    env = worker_env(redis_server.url, fake.url)
    args = ["calibrate", str(data), "--human", "rater", "--setup", SETUPS[0], "--setup", SETUPS[1]]
    done = run_evalq(env, *args, timeout_s=300)
    assert done.returncode == 2
    assert "no row has a 'rater' column" in done.stderr
    assert "human" in done.stderr  # the columns it does have


def test_a_setup_refused_after_others_submits_none_of_them(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    """The third setup asks gemini-2.5-pro for no thinking, which the model refuses: the
    command exits 2 naming that setup, and the two setups before it were not submitted."""
    from tests.support.cli import run_evalq

    data = write_calibration_example(tmp_path / "example")
    env = worker_env(redis_server.url, fake.url)
    before = set(client.job_reads.job_ids(limit=0))
    refused = "pro:template=fluency,judge_model=gemini-2.5-pro,thinking_budget=judge=0"
    args = ["calibrate", str(data), "--human", HUMAN_COLUMN]
    for setup in (*SETUPS, refused):
        args += ["--setup", setup]
    done = run_evalq(env, *args, timeout_s=300)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "setup 'pro'" in done.stderr and "gemini-2.5-pro" in done.stderr
    assert set(client.job_reads.job_ids(limit=0)) == before


def test_the_demo_step_ranks_the_two_setups_within_80_columns(demo_step: DemoStep) -> None:
    out = demo_step.output
    assert max(len(line) for line in out.splitlines()) <= 80, out
    assert "$ evalq calibrate calibration.jsonl --human human" in out
    assert "Most agreeing: summary" in out
    assert "Best per unit of cost: summary" in out
