"""Reports and comparison pages of datasets in Vertex AI's column names show every text the judge
saw under the dataset's own column name, through the CLI on real workers and the fake judge.

The datasets are the ones a page can get wrong: a pairwise one in Vertex's names (`prompt`,
`context`, `reference`, `response`, `baseline_model_response`), whose two responses must show
beside its prompt and the judge's explanations, and a summarization one, whose `instruction` must
not show as `prompt`. Each job runs twice so that `evalq compare` has two sides; `evalq report
--html` and `evalq compare --html` are read back and every (column, text) pair of each row must
be on the page as a labelled text."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import RedisServer
from tests.support.cli import evalq_ok
from tests.support.datasets import write_rows
from tests.support.jobs import submitted_job, wait_finished

pytestmark = pytest.mark.integration

QUESTION = "Why are spring tides larger?"
CONTEXT = "Tides are caused mainly by the Moon's pull; spring tides come when Sun and Moon align."
GOOD = "Because the Sun and the Moon line up and their pulls add."
POOR = "Because the water is warmer."

PAIRWISE = [
    {
        "id": "v1",
        "prompt": QUESTION,
        "context": CONTEXT,
        "reference": "The Sun's and the Moon's pulls add up.",
        "response": GOOD,
        "baseline_model_response": POOR,
    },
    {
        "id": "v2",
        "prompt": "What causes tides?",
        "context": CONTEXT,
        "reference": "Mainly the Moon's pull.",
        "response": POOR,
        "baseline_model_response": "Mostly the Moon's gravity.",
    },
]
POINTWISE = [
    {"id": "s1", "instruction": "Summarise the text.", "context": CONTEXT, "response": GOOD},
    {"id": "s2", "instruction": "Summarise it in a line.", "context": CONTEXT, "response": POOR},
]
# Each dataset, its `evalq run` arguments and the columns its judge reads (all of them here).
JOBS = {
    "pairwise": (PAIRWISE, ["pairwise"]),
    "pointwise": (POINTWISE, ["pointwise", "--template", "summarization_quality"]),
}
_TEXT = re.compile(r'<div class="label">(.*?)</div><div class="value">(.*?)</div>', re.DOTALL)


def labelled_texts(page: str) -> set[tuple[str, str]]:
    """Every (label, text) the page shows as a judged text (none is folded here)."""
    return {(html.unescape(label), html.unescape(value)) for label, value in _TEXT.findall(page)}


def expected(name: str, record: dict[str, str]) -> set[tuple[str, str]]:
    """(label, text) per column the judge read; pairwise's two responses carry their side."""
    sides = {"response": "A · response", "baseline_model_response": "B · baseline_model_response"}
    if name != "pairwise":
        sides = {}
    return {(sides.get(c, c), text) for c, text in record.items() if c != "id"}


@pytest.fixture(scope="module")
def jobs_run_twice(
    workers_env: dict[str, str], redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, tuple[str, str]]]:
    """Each dataset run twice through `evalq run`, all submitted before any is waited on."""
    folder = tmp_path_factory.mktemp("vertex-named")
    ids: dict[str, tuple[str, str]] = {}
    for name, (rows, args) in JOBS.items():
        dataset = str(write_rows(folder / f"{name}.jsonl", rows))
        first, second = (
            submitted_job(workers_env, "run", args[0], dataset, *args[1:]) for _ in range(2)
        )
        ids[name] = (first, second)
    wait_finished(redis_server.url, ((name, job) for name, pair in ids.items() for job in pair))
    yield ids


@pytest.mark.parametrize("name", list(JOBS))
def test_report_and_compare_show_each_judged_text_under_its_column(
    name: str,
    workers_env: dict[str, str],
    jobs_run_twice: dict[str, tuple[str, str]],
    tmp_path: Path,
) -> None:
    first, second = jobs_run_twice[name]
    rows = JOBS[name][0]
    report = tmp_path / "report.html"
    evalq_ok(workers_env, "report", first, "--html", str(report))
    shown = labelled_texts(report.read_text(encoding="utf-8"))
    for record in rows:
        want = expected(name, record)
        assert want <= shown, (record["id"], sorted(want - shown))
    if name == "pointwise":  # the instruction under its own name, not as "prompt"
        assert not any(label == "prompt" for label, _ in shown)

    page = tmp_path / "compare.html"
    evalq_ok(workers_env, "compare", first, second, "--html", str(page))
    compared = labelled_texts(page.read_text(encoding="utf-8"))
    for record in rows:
        want = expected(name, record)
        assert want <= compared, (record["id"], sorted(want - compared))
