"""Exports show what was judged, and each metric speaks in its own words, through the CLI on real
workers and the fake judge.

Exports: for every metric, `evalq results` as CSV and as JSONL (and Job.results()) carry the
texts the judge saw under the dataset's own column names (the responses, the baseline, each
candidate's response, the query or prompt, the context), and the media by their path, or "inline
image/png, N bytes" for a data: URI, never its bytes. Pairwise runs in our column names, in
Vertex's and through --map.

Own words: `evalq status` counts unscored ratings, comparisons, sentence labellings or questions,
as the metric judges them; `evalq run --help` (and `rank --help`) lists the built-in rating
templates, a line each; a CSV's default row ids are 1, 2, 3 whatever lines its quoted cells span."""

from __future__ import annotations

import base64
import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import evalq
from tests.conftest import RedisServer
from tests.support.cli import bare_env, evalq_ok
from tests.support.datasets import png, write_rows, yes_no
from tests.support.jobs import submitted_job, wait_finished
from tests.support.metric_examples import metric_examples, submit_argv

pytestmark = pytest.mark.integration

CONTEXT = "Tides are caused mainly by the Moon's pull; spring tides come when Sun and Moon align."
QUESTIONS = [yes_no("Is there a square?")]


@dataclass
class Ran:
    """A finished job, its dataset and the dataset's records by id (what the judge was
    given)."""

    job_id: str
    dataset: Path
    records: dict[str, dict[str, Any]]


def _records(path: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return {str(r["id"]): r for r in rows}


def _datasets(folder: Path) -> dict[str, tuple[Path, list[str]]]:
    """Each job's dataset and `evalq run` (or `evalq rank`) arguments after the dataset: every
    metric's example, and datasets of our own for what the examples do not show."""
    examples = metric_examples(folder / "examples")
    image = png(folder / "square.png")
    inline = "data:image/png;base64," + base64.b64encode(image.read_bytes()).decode()
    gecko = [
        {"id": "file", "prompt": "a red square", "image": image.name, "questions": QUESTIONS},
        {"id": "inline", "prompt": "a red square", "image": inline, "questions": QUESTIONS},
    ]
    models = [
        {
            "id": "cells",
            "prompt": "a red square",
            "sdxl": image.name,
            "flux": inline,
            "questions": QUESTIONS,
        }
    ]
    question = "Why are spring tides larger?"
    good = "Because the Sun and the Moon line up and their pulls add."
    poor = "Because the water is warmer."
    vertex = [
        {"id": "v1", "prompt": question, "response": good, "baseline_model_response": poor},
        {"id": "v2", "prompt": question, "response": poor, "baseline_model_response": good},
    ]
    mapped = [
        {"id": "m1", "ask": question, "notes": CONTEXT, "model_x": good, "model_y": poor},
        {"id": "m2", "ask": question, "notes": CONTEXT, "model_x": poor, "model_y": good},
    ]
    return {
        "gecko-image": (write_rows(folder / "gecko.jsonl", gecko), []),
        "gecko-image cells": (
            write_rows(folder / "cells.jsonl", models),
            ["--candidates", "sdxl,flux"],
        ),
        **{m: examples[m] for m in ("gecko-video", "groundedness", "pointwise", "pairwise")},
        "pairwise vertex": (write_rows(folder / "vertex.jsonl", vertex), []),
        "pairwise mapped": (
            write_rows(folder / "mapped.jsonl", mapped),
            [
                *("--map", "prompt=ask", "--map", "context=notes"),
                *("--map", "response_a=model_x", "--map", "response_b=model_y"),
            ],
        ),
        "rank": examples["rank"],
    }


@pytest.fixture(scope="module")
def every_metric_jobs(
    workers_env: dict[str, str], redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Ran]]:
    """Every job above, submitted together through `evalq run` and waited on."""
    submitted = {
        name: Ran(
            submitted_job(workers_env, *submit_argv(name.split()[0], dataset, flags)),
            dataset,
            _records(dataset),
        )
        for name, (dataset, flags) in _datasets(tmp_path_factory.mktemp("judged")).items()
    }
    wait_finished(redis_server.url, ((name, ran.job_id) for name, ran in submitted.items()))
    yield submitted


def _exports(env: dict[str, str], job_id: str) -> tuple[list[str], list[dict[str, str]], list]:
    """(the CSV's header, its rows, the JSONL's objects) of `evalq results`."""
    text = evalq_ok(env, "results", job_id, "--format", "csv").stdout
    header = next(csv.reader(io.StringIO(text)))
    table = list(csv.DictReader(io.StringIO(text)))
    lines = evalq_ok(env, "results", job_id, "--format", "jsonl").stdout.splitlines()
    return header, table, [json.loads(line) for line in lines]


def _check_texts(env: dict[str, str], ran: Ran, columns: dict[str, str]) -> None:
    """Every row's export holds, under each dataset column named (-> the record's field it
    is read from), the text the dataset gave, in the CSV and in the JSONL's `inputs`; and
    no column twice."""
    header, table, objects = _exports(env, ran.job_id)
    assert len(header) == len(set(header)), header
    for row, obj in zip(table, objects, strict=True):
        record = ran.records[row["id"]]
        for column, field in columns.items():
            if field in record:
                assert row[column] == record[field], (column, row["id"])
                assert obj["inputs"][column] == record[field], (column, row["id"])


def test_pairwise_in_our_vertexs_and_mapped_column_names(
    workers_env: dict[str, str], every_metric_jobs: dict[str, Ran]
) -> None:
    ours = {c: c for c in ("context", "response_a", "response_b")}
    _check_texts(workers_env, every_metric_jobs["pairwise"], ours)

    vertex = every_metric_jobs["pairwise vertex"]
    vertex_columns = {"response": "response", "baseline_model_response": "baseline_model_response"}
    _check_texts(workers_env, vertex, vertex_columns)
    header, table, objects = _exports(workers_env, vertex.job_id)
    assert header.count("prompt") == 1 and "input:prompt" not in header  # the prompt once
    assert [r["prompt"] for r in table] == [r["prompt"] for r in vertex.records.values()]
    assert [r["winner_is"] for r in table] != ["", ""]
    assert all(set(o["inputs"]) == set(vertex_columns) for o in objects)

    mapped = every_metric_jobs["pairwise mapped"]
    _check_texts(workers_env, mapped, {c: c for c in ("ask", "notes", "model_x", "model_y")})
    header, _, objects = _exports(workers_env, mapped.job_id)
    assert not {"response_a", "response_b", "context"} & set(header)  # the user's names only
    assert all(list(o["inputs"]) == ["ask", "notes", "model_x", "model_y"] for o in objects)


def test_every_other_metric_exports_its_texts_and_names_its_media(
    workers_env: dict[str, str], every_metric_jobs: dict[str, Ran], redis_server: RedisServer
) -> None:
    _check_texts(
        workers_env, every_metric_jobs["pointwise"], {"context": "context", "response": "response"}
    )
    _check_texts(
        workers_env,
        every_metric_jobs["rank"],
        {c: c for c in ("context", "terse", "moderate", "cited")},
    )

    # Groundedness: query and context under their names; the response judged once, in the
    # metric's `response` column, whether the dataset gave it or the model under test wrote it.
    grounded = every_metric_jobs["groundedness"]
    _check_texts(workers_env, grounded, {"query": "query", "context": "context"})
    header, table, objects = _exports(workers_env, grounded.job_id)
    assert header.count("response") == 1 and "input:response" not in header
    for row, obj in zip(table, objects, strict=True):
        given = grounded.records[row["id"]].get("response")
        assert obj["inputs"]["response"] == row["response"] == (given or obj["details"]["response"])

    # Media by path, or by what inline data is and its size; never its bytes.
    image = every_metric_jobs["gecko-image"]
    header, table, objects = _exports(workers_env, image.job_id)
    size = len(base64.b64decode(image.records["inline"]["image"].split(",", 1)[1]))
    by_id = {r["id"]: r for r in table}
    assert by_id["inline"]["image"] == f"inline image/png, {size} bytes"
    assert by_id["file"]["image"] == str((image.dataset.parent / "square.png").resolve())
    assert [o["inputs"] for o in objects] == [{"image": r["image"]} for r in table]
    text = evalq_ok(workers_env, "results", image.job_id, "--format", "csv").stdout
    assert "base64" not in text and "iVBOR" not in text

    cells = every_metric_jobs["gecko-image cells"]
    header, table, objects = _exports(workers_env, cells.job_id)
    assert [(r["candidate"], r["sdxl"], r["flux"]) for r in table] == [
        ("sdxl", by_id["file"]["image"], ""),
        ("flux", "", f"inline image/png, {size} bytes"),
    ]
    assert [list(o["inputs"]) for o in objects] == [["sdxl"], ["flux"]]

    video = every_metric_jobs["gecko-video"]
    header, table, objects = _exports(workers_env, video.job_id)
    for row, obj in zip(table, objects, strict=True):
        assert Path(row["video"]).name == Path(video.records[row["id"]]["video"]).name
        assert obj["inputs"] == {"video": row["video"]}

    # Job.results(): the same columns as the CSV.
    from evalq.client import Client
    from evalq.worker.settings import Settings

    reader = Client(Settings(redis_url=redis_server.url, api_key=None))
    frame = evalq.Job(every_metric_jobs["pairwise vertex"].job_id, reader).results()
    header, table, _ = _exports(workers_env, every_metric_jobs["pairwise vertex"].job_id)
    assert list(frame.columns) == header
    assert list(frame["baseline_model_response"]) == [r["baseline_model_response"] for r in table]


def test_status_counts_unscored_units_in_the_metrics_own_words(
    workers_env: dict[str, str], every_metric_jobs: dict[str, Ran]
) -> None:
    words = {
        "pointwise": "unscored ratings",
        "pairwise": "unscored comparisons",
        "rank": "unscored comparisons",
        "groundedness": "unscored sentence labellings",
        "gecko-image": "unscored questions",
    }
    for name, label in words.items():
        text = evalq_ok(workers_env, "status", every_metric_jobs[name].job_id).stdout
        assert label in text, (name, text)
        assert name.startswith("gecko") or "questions" not in text, (name, text)
        summary = json.loads(
            evalq_ok(workers_env, "status", every_metric_jobs[name].job_id, "--json").stdout
        )
        assert summary["judged_units"] == label.removeprefix("unscored ")


def test_run_and_rank_help_list_the_built_in_templates() -> None:
    from evalq.metrics.ratings.rubrics import BUILTIN_RUBRICS, rubric_line

    for command in ("run", "rank"):
        shown = evalq_ok(bare_env(), command, "--help").stdout
        assert "Built-in rating templates (--template NAME):" in shown
        words = " ".join(shown.split())  # the lines as click wraps them, read as one text
        for name, rubric in BUILTIN_RUBRICS.items():
            assert f" {name} {rubric_line(rubric)} " in words + " ", (command, name)


def test_a_csv_with_multi_line_cells_gets_ids_1_2_3(
    workers_env: dict[str, str], tmp_path: Path
) -> None:
    """Records, not lines, are counted; an explicit id column still wins."""
    png(tmp_path / "a.png")
    prompts = ("a red\nsquare", "a red square,\n\non white", "a red square")
    ids = {"multi.csv": None, "named.csv": ["first", "", "7"]}  # "": no id, its ordinal
    for name, given in ids.items():
        path = tmp_path / name
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow([*(["id"] if given else []), "prompt", "image", "questions"])
            for n, prompt in enumerate(prompts):
                own = [given[n]] if given else []
                writer.writerow([*own, prompt, "a.png", json.dumps(QUESTIONS)])
        ran = evalq_ok(workers_env, "run", "gecko-image", str(path), "--wait", "--json")
        job_id = json.loads(ran.stdout)["job_id"]
        text = evalq_ok(workers_env, "results", job_id, "--format", "csv").stdout
        table = list(csv.DictReader(io.StringIO(text)))
        expected = ["first", "2", "7"] if given else ["1", "2", "3"]
        assert [(r["id"], r["line"], r["status"]) for r in table] == [
            (expected[0], "2", "scored"),
            (expected[1], "4", "scored"),
            (expected[2], "7", "scored"),
        ]
