"""The toy metric of docs/architecture/adding-a-metric.md, read from the page, in-process: the
page's own test passes with evalq.testing, the metric stays small, and its dry run, derived by
MetricBase from its plan and run_unit, counts one call per judge. The same code runs end to end
through its entry point in tests/integration/metrics/test_toy_metric.py."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from evalq.core.dry_run import CharsCounter, DryEnv
from evalq.core.judge import MediaPart
from evalq.core.media import MediaPlace
from evalq.core.metric import Metric
from evalq.core.models import RowInput
from evalq.testing import Harness
from tests.conftest import ROOT
from tests.support.doc_examples import page_python_files

PAGE = Path(ROOT) / "docs" / "architecture" / "adding-a-metric.md"
JUDGES = ["gemini-2.5-flash", "gemini-2.5-pro"]


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The page's files written as a package and imported; gone from sys.modules after."""
    for name, code in page_python_files(PAGE).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield importlib.import_module("evalq_toy.metric")
    for name in [m for m in sys.modules if m.split(".")[0] in ("evalq_toy", "test_toy")]:
        del sys.modules[name]


def test_the_page_shows_a_whole_package_and_its_test() -> None:
    assert set(page_python_files(PAGE)) == {
        "evalq_toy/__init__.py",
        "evalq_toy/options.py",
        "evalq_toy/metric.py",
        "test_toy.py",
    }


def test_the_toy_metric_is_at_most_60_lines() -> None:
    assert len(page_python_files(PAGE)["evalq_toy/metric.py"].splitlines()) <= 60


def test_the_pages_own_test_passes(toy: ModuleType) -> None:
    importlib.import_module("test_toy").test_each_judge_rates_brevity()


def test_the_toy_fits_the_metric_protocol_with_the_bases_defaults(toy: ModuleType) -> None:
    metric: Metric[object, object] = toy.TOY
    assert metric.required_columns == ("prompt", "response")
    assert (metric.shows_media, metric.judge_roles, metric.candidate_field) == (
        False,
        ("judge",),
        None,
    )
    assert metric.check([], {}) == []


def no_media(row: RowInput, field: str) -> MediaPart:
    raise AssertionError("the toy reads no media")


def test_its_dry_run_counts_each_judge_call_its_run_would_make(
    toy: ModuleType, tmp_path: Path
) -> None:
    """Each call counted as a hand-written dry_plan would count it: the request run_unit sends,
    about 60 answer tokens, and a "brevity ratings" count per unit."""
    job = Harness(toy.TOY, {}, dict.fromkeys(JUDGES)).job()
    env = DryEnv(job=job, counter=CharsCounter(), prices={}, media_loader=no_media)
    row = toy.TOY.parse_row(
        1, {"prompt": "Hi?", "response": "Hello."}, MediaPlace(tmp_path), {}, []
    )
    toy.TOY.dry_plan(row, env)
    assert env.counters == {"brevity ratings": 2}
    assert {model: (t.calls, t.output) for (_, model), t in env.tallies.items()} == dict.fromkeys(
        JUDGES, (1, 60)
    )
