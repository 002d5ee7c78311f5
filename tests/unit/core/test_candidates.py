"""Several candidates in one job (--candidates): each row becomes one cell per candidate when
the dataset is read, a bad cell fails alone naming the row and the candidate's column, the
summary and exports carry the candidate. Pure: no Redis here (the real-stack test is
tests/integration/metrics/test_candidates.py)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from evalq.client.output.exports.csv_tables import results_csv
from evalq.client.output.exports.frames import results_frame
from evalq.client.output.exports.jsonl import results_jsonl
from evalq.core.candidates import cell_candidates
from evalq.core.counters import JobCounters
from evalq.core.dataset import load_dataset
from evalq.core.errors import CellInputError, DatasetError
from evalq.core.models import RowResult
from evalq.core.summary import build_summary
from evalq.worker.store import row_key
from tests.support.datasets import write_rows
from tests.support.images import PNG_SIGNATURE
from tests.support.job_configs import job_config


@pytest.fixture
def candidate_images(tmp_path: Path) -> Path:
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.png").write_bytes(PNG_SIGNATURE)
    return tmp_path


def test_each_row_becomes_one_cell_per_candidate_with_its_own_media(candidate_images: Path) -> None:
    path = write_rows(
        candidate_images / "d.jsonl",
        [
            {"id": "r1", "prompt": "a cat", "sdxl": "a.png", "flux": "b.png", "note": "x"},
            {"id": "r2", "prompt": "a dog", "sdxl": "b.png", "flux": "c.png"},
        ],
    )
    loaded = load_dataset(path, "gecko-image", {"candidates": ["sdxl", "flux"]})
    assert not loaded.errors and loaded.total == 4
    cells = [(r.id, r.line, r.candidate, Path(r.image.value).name) for r in loaded.rows]
    assert cells == [
        ("r1", 1, "sdxl", "a.png"),
        ("r1", 1, "flux", "b.png"),
        ("r2", 2, "sdxl", "b.png"),
        ("r2", 2, "flux", "c.png"),
    ]
    # The other candidates' columns are not extra; a real extra column is, warned once.
    assert loaded.rows[0].extra == {"note": "x"}
    assert [w for w in loaded.warnings if "note" in w] == [
        "unknown column(s) 'note' in 1 of 2 rows: kept as extra, not read by the metric"
    ]
    assert len({row_key(r) for r in loaded.rows}) == 4  # every cell has a key of its own
    assert row_key(loaded.rows[1]) == "1/flux"


def test_a_missing_file_fails_that_candidates_cell_naming_row_and_column(
    candidate_images: Path,
) -> None:
    path = write_rows(
        candidate_images / "d.jsonl",
        [
            {"id": "r1", "prompt": "a cat", "sdxl": "a.png", "flux": "gone.png"},
            {"id": "r2", "prompt": "a dog", "sdxl": "a.png"},
            {"id": "r3", "sdxl": "a.png", "flux": "b.png"},
        ],
    )
    loaded = load_dataset(path, "gecko-image", {"candidates": ["sdxl", "flux"]})
    assert [(r.id, r.candidate) for r in loaded.rows] == [("r1", "sdxl"), ("r2", "sdxl")]
    errors = {(e.row_id, e.candidate): (line, e) for line, e in loaded.errors}  # type: ignore[attr-defined]
    assert all(isinstance(e, CellInputError) for _, e in loaded.errors)
    line, gone = errors[("r1", "flux")]
    assert line == 1 and gone.field == "flux"
    assert str(gone).startswith("row r1, candidate 'flux': field 'flux':")
    assert "gone.png" in str(gone)
    assert errors[("r2", "flux")][1].field == "flux"  # an empty cell: its column named
    # A row-wide problem fails every candidate's cell, so each candidate's count stays whole.
    assert {c for (row_id, c) in errors if row_id == "r3"} == {"sdxl", "flux"}
    assert errors[("r3", "sdxl")][1].field == "prompt"
    assert loaded.total == 6


def test_a_candidate_column_no_row_has_refuses_the_dataset(candidate_images: Path) -> None:
    path = write_rows(candidate_images / "d.jsonl", [{"prompt": "a cat", "sdxl": "a.png"}])
    with pytest.raises(DatasetError, match="'imagen'"):
        load_dataset(path, "gecko-image", {"candidates": ["sdxl", "imagen"]})


def test_csv_needs_the_candidate_columns_not_the_image_column(candidate_images: Path) -> None:
    path = candidate_images / "d.csv"
    path.write_text("id,prompt,sdxl,flux\nr1,a cat,a.png,b.png\n")
    loaded = load_dataset(path, "gecko-image", {"candidates": "sdxl,flux"})
    assert [r.candidate for r in loaded.rows] == ["sdxl", "flux"]


def test_an_image_column_next_to_candidates_is_not_read_and_says_so(candidate_images: Path) -> None:
    path = write_rows(
        candidate_images / "d.jsonl",
        [{"prompt": "a cat", "image": "c.png", "sdxl": "a.png", "flux": "b.png"}],
    )
    loaded = load_dataset(path, "gecko-image", {"candidates": ["sdxl", "flux"]})
    assert [Path(r.image.value).name for r in loaded.rows] == ["a.png", "b.png"]
    assert any("'image' is not read" in w for w in loaded.warnings)


def test_pointwise_cells_take_one_response_column_per_model(candidate_images: Path) -> None:
    path = write_rows(
        candidate_images / "d.jsonl",
        [{"id": "q1", "prompt": "Say hi", "terse": "hi", "wordy": "hello there, friend"}],
    )
    options = {"candidates": ["terse", "wordy"], "template": "instruction_following"}
    loaded = load_dataset(path, "pointwise", options)
    assert [(r.candidate, r.data["response"]) for r in loaded.rows] == [
        ("terse", "hi"),
        ("wordy", "hello there, friend"),
    ]


@pytest.mark.parametrize(
    ("metric", "names", "message"),
    [
        ("groundedness", ["a", "b"], "takes no candidates"),
        ("gecko-image", ["a", "a"], "names column 'a' 2 times"),
        ("gecko-image", ["a b"], "without spaces"),
        ("gecko-image", ["x:y"], "without spaces"),
        ("gecko-image", ["prompt", "b"], "row's own columns"),
        ("gecko-image", [" ", ""], "names no column"),
    ],
)
def test_bad_candidate_names_are_refused(metric: str, names: list[str], message: str) -> None:
    with pytest.raises(DatasetError, match=message):
        cell_candidates(metric, {"candidates": names})


def test_rank_keeps_its_own_candidates() -> None:
    assert cell_candidates("rank", {"candidates": ["a", "b"]}) is None
    assert cell_candidates("gecko-image", {}) is None


def cell(i: int, candidate: str | None, score: float | None) -> RowResult:
    return RowResult(
        id=f"r{i}",
        line=i,
        prompt="p",
        status="scored" if score is not None else "failed",
        score=score,
        tag_scores={} if score is None else {"color": score},
        candidate=candidate,
    )


def test_summary_has_each_candidates_mean_with_its_interval() -> None:
    config = job_config(rows_total=20, options={"candidates": ["sdxl", "flux"]})
    rows = [cell(i, "flux", 0.5) for i in range(10)] + [cell(i, "sdxl", 1.0) for i in range(9)]
    rows.append(cell(9, "sdxl", None))
    summary = build_summary(config, JobCounters(status="finished"), {}, rows, now=1.0)
    assert list(summary.candidates) == ["sdxl", "flux"]  # the order given
    sdxl, flux = summary.candidates["sdxl"], summary.candidates["flux"]
    assert (sdxl.rows, sdxl.rows_scored, sdxl.rows_failed, sdxl.mean_score) == (10, 9, 1, 1.0)
    assert sdxl.ci_method == "wilson" and sdxl.ci95 is not None
    assert flux.mean_score == 0.5 and flux.tag_counts == {"color": 10}
    one = config.model_copy(update={"options": {}})
    assert build_summary(one, JobCounters(), {}, [cell(1, None, 1.0)], now=1.0).candidates == {}


def test_exports_carry_the_candidate_only_for_multi_candidate_jobs() -> None:
    cells = [cell(1, "sdxl", 1.0), cell(1, "flux", 0.0)]
    header = next(csv.reader(io.StringIO(results_csv(cells))))
    assert header[:3] == ["id", "candidate", "line"]
    assert [json.loads(x)["candidate"] for x in results_jsonl(cells)] == ["sdxl", "flux"]
    assert list(results_frame(cells).columns[:2]) == ["id", "candidate"]
    single = [cell(1, None, 1.0)]
    assert "candidate" not in next(csv.reader(io.StringIO(results_csv(single))))
    assert "candidate" not in json.loads(next(iter(results_jsonl(single))))
    assert "candidate" not in results_frame(single).columns
