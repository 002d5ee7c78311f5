"""A metric added from outside evalq: a package of its own, written here into a temporary folder,
declares a `toy` metric under the `evalq.metrics` entry point group (a .dist-info beside it, as
`pip install` would write), and runs end to end through the command line on real workers and
the fake server: run, status, results, report, compare. Nothing in evalq names it; if any part
of evalq still branched on the built-in metrics' names, some step here would miss the toy.

The toy asks each judge to rate a response's brevity 1-5 (the fake's simulated judge answers a
schema with `rating` and `explanation`), declares its flag (--tone), its row view, the value it
is compared on, how it reads human labels, and one refusal.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from devtools.local import ROOT
from evalq.examples.datasets import write_rows
from tests.support.cli import one_line_refusal, run_evalq_process
from tests.support.stack import stack

pytestmark = pytest.mark.integration

TOY_OPTIONS = """
from typing import Annotated, Literal

from evalq.core.options import Flag, MetricOptions


class ToyOptions(MetricOptions):
    tone: Annotated[
        Literal["kind", "harsh"] | None,
        Flag("How the toy judge words its brevity ratings."),
    ] = None
"""

TOY_METRIC = """
from collections.abc import Mapping
from statistics import fmean
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from evalq.core.errors import InputError, JudgeError, must_propagate
from evalq.core.judge import JudgeRequest
from evalq.core.label_reading import HumanLabels
from evalq.core.metric import Plan, Unit
from evalq.core.models import QuestionResult, RowInput, RowResult, Verdict
from evalq.core.prompting import data_rule, delimit
from evalq.core.row_value import RowValue
from evalq.core.row_view import VerdictLine, ViewParts, texts_of
from evalq.core.verdicts import unscored


class BrevityUnit(Unit):
    kind: Literal["brevity"] = "brevity"
    judge: str


class BrevityPlan(Plan[BrevityUnit]):
    pass


class BrevityReply(BaseModel):
    explanation: str
    rating: int


class Toy:
    name = "toy"
    required_columns = ("prompt", "response")
    plan_model = BrevityPlan
    judged_units = "brevity ratings"
    judge_roles = ("judge",)
    candidate_field = None
    own_candidates = False
    shows_media = False
    compared_on = RowValue("brevity", "brevity rating", 1.0, 5.0, detail="rating")
    human_labels = HumanLabels(row="rating")

    def refusal(self, options, judges, vertexai):
        lite = [j for j in judges if j.endswith("-lite")]
        if options.get("tone") == "harsh" and lite:
            return f"toy: --tone harsh needs a full judge, not {', '.join(lite)}"
        return None

    def judged_inputs(self, row, result):
        return {"prompt": row.prompt, "response": row.data["response"]}

    def parse_row(self, number, record, place, options, warnings):
        row_id = str(record.get("id") or number)
        for field in ("prompt", "response"):
            if not isinstance(record.get(field), str) or not record[field].strip():
                raise InputError(row_id, field, "must be non-empty text")
        extra = {k: v for k, v in record.items() if k not in ("id", "prompt", "response")}
        data = {"response": record["response"]}
        return RowInput(id=row_id, line=number, prompt=record["prompt"], data=data, extra=extra)

    def check(self, rows, options):
        return []

    def _request(self, row, options):
        words = "gently" if options.get("tone") != "harsh" else "bluntly"
        prompt = (
            f"{data_rule()}\\nRate {words}, 1 to 5, how brief the response is for the prompt.\\n"
            + delimit("prompt", row.prompt)
            + delimit("response", row.data["response"])
        )
        return JudgeRequest(prompt=prompt, schema=BrevityReply, max_output_tokens=300)

    def plan(self, ctx):
        units = [BrevityUnit(index=i, judge=j) for i, j in enumerate(ctx.job.judges)]
        return BrevityPlan(units=units)

    def run_unit(self, ctx, plan, unit):
        judge = ctx.judge(unit.judge)
        try:
            reply = judge.generate(self._request(ctx.row, ctx.options))
        except JudgeError as exc:
            if must_propagate(exc):
                raise
            return unscored(unit.index, exc.reason, exc.message, exc.raw, judge_model=judge.model)
        try:
            read = BrevityReply.model_validate_json(reply.text)
        except ValidationError as exc:
            return unscored(unit.index, "parse_error", str(exc)[:200], reply.text, judge_model=judge.model)
        return Verdict(
            index=unit.index, status="ok", answer=str(read.rating),
            value={"rating": read.rating, "explanation": read.explanation},
            judge_model=judge.model, raw=reply.text[:2000], simulated=reply.simulated,
        )

    def aggregate(self, row, plan, results):
        ratings, questions, said = [], [], []
        for unit in plan.units:
            verdict = results.get(unit.index)
            ok = verdict is not None and verdict.status == "ok"
            if ok:
                ratings.append(verdict.value["rating"])
                said.append(verdict.value["explanation"])
            questions.append(QuestionResult(
                question=f"brevity by {unit.judge}", tag="brevity", expected="",
                answer=verdict.answer if ok else None, result=None,
                status="ok" if ok else "unscored",
                reason=None if ok or verdict is None else verdict.reason,
                judge_model=unit.judge,
            ))
        rating = fmean(ratings) if ratings else None
        simulated = any(v.simulated for v in results.values())
        return RowResult.of(
            row, status="scored" if rating is not None else "failed",
            score=None if rating is None else (rating - 1) / 4,
            reason=None if rating is not None else "judge_error",
            questions=questions, simulated=simulated,
            details={"rating": rating, "explanations": said},
        )

    def summarize(self, rows):
        rated = [r.details["rating"] for r in rows if r.details.get("rating") is not None]
        return {"mean_brevity": fmean(rated)} if rated else {}

    def dry_plan(self, row, env):
        for judge in env.job.judges:
            env.call(self._request(row, env.options), judge, 60)
            env.count("brevity ratings")

    def view(self, result, named, row):
        rating = result.details.get("rating")
        lines = tuple(
            VerdictLine("toy judge", f"brevity {rating}", "ok", (("explanation", e),))
            for e in result.details.get("explanations") or []
        )
        headline = "not rated" if rating is None else f"brevity rating {rating:g} of 5"
        return ViewParts(headline=headline, tone="plain", texts=texts_of(named), verdicts=lines)


TOY = Toy()
"""

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
    package = site / "evalq_toy"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "from evalq.core.registry import MetricEntry\n\n"
        'ENTRY = MetricEntry("evalq_toy.metric:TOY", "evalq_toy.options:ToyOptions")\n'
    )
    (package / "options.py").write_text(textwrap.dedent(TOY_OPTIONS))
    (package / "metric.py").write_text(textwrap.dedent(TOY_METRIC))
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
            "error: toy does not take --validator (options of gecko-image, gecko-video); "
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
