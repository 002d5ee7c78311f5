"""`gcs_media=` (Client.submit, plan, evaluate) wins over EVALQ_GCS_MEDIA for what the submitter
lets through, as `data_roots=` wins over EVALQ_DATA_ROOTS; a malformed one is refused in one line
naming it, before anything is read. (The worker's own setting still bounds every job:
tests/integration/security/test_gcs_media_buckets.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from evalq.client.submit import prepare
from evalq.core.errors import EvalqError
from evalq.worker.settings import Settings
from tests.support.datasets import write_rows

VERTEX = {
    "use_vertexai": True,
    "vertex_project": "p",
    "vertex_location": "us-central1",
    "api_key": None,
}


def refused_rows(settings: Settings, dataset: Path, **spec: object) -> list[str]:
    loaded = prepare(settings, "gecko-image", dataset, spec).dataset  # type: ignore[arg-type]
    return [error.row_id for _, error in loaded.errors]


def test_the_argument_wins_over_the_setting(tmp_path: Path) -> None:
    dataset = write_rows(
        tmp_path / "rows.jsonl",
        [
            {"id": "team", "prompt": "red", "image": "gs://team-media/a.png"},
            {"id": "payroll", "prompt": "red", "image": "gs://payroll-bucket/a.png"},
        ],
    )
    unset = Settings(**VERTEX)  # type: ignore[arg-type]
    allowing = Settings(**VERTEX, gcs_media=("gs://team-media", "gs://payroll-bucket"))  # type: ignore[arg-type]
    assert refused_rows(unset, dataset) == ["team", "payroll"]
    assert refused_rows(allowing, dataset) == []
    assert refused_rows(unset, dataset, gcs_media=["gs://team-media"]) == ["payroll"]
    assert refused_rows(allowing, dataset, gcs_media=["team-media/"]) == ["payroll"]
    assert refused_rows(allowing, dataset, gcs_media=[]) == ["team", "payroll"]


@pytest.mark.parametrize(
    ("given", "says"),
    [
        (
            ["gs://Team-Media"],
            "gcs_media: 'gs://Team-Media': bucket 'Team-Media' is not lower case",
        ),
        (["gs://team-media/../payroll"], "gcs_media: 'gs://team-media/../payroll': its folder"),
        ("gs://team-media", "gcs_media: give a list of places, not the string"),
    ],
)
def test_a_malformed_argument_is_refused_in_one_line(
    tmp_path: Path, given: object, says: str
) -> None:
    dataset = write_rows(tmp_path / "rows.jsonl", [{"id": "r", "prompt": "red", "image": "a.png"}])
    with pytest.raises(EvalqError) as refused:
        prepare(Settings(**VERTEX), "gecko-image", dataset, {"gcs_media": given})  # type: ignore[arg-type, typeddict-item]
    assert str(refused.value).startswith(says) and "\n" not in str(refused.value)
