"""`gs://` media are judged only from the Cloud Storage places EVALQ_GCS_MEDIA allows, through the
CLI as a user runs it, on Vertex AI against the fake server.

Vertex reads a `gs://` URI with the project's service agent, so without this check a dataset
naming `gs://payroll-bucket/salaries.csv` (plain, or in the seeds' `file_data` form) would have
the judge read the payroll file. The submitter refuses such a row in one line naming the row,
the field and the setting (with the setting unset, or naming other places); an allowed bucket's
objects are judged; and a job whose client allowed more than the worker does (a wider setting,
an older client) has those rows refused by the worker, its own EVALQ_GCS_MEDIA bounding every
job. The fake's /stats events name the fileData URIs each request carried: the payroll object
never reaches the Vertex route, where the allowed ones do."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalq.client.cli import exit_codes
from tests.support.cli import run_evalq
from tests.support.datasets import write_rows
from tests.support.stack import Stack, stack
from tests.support.vertex import VERTEX_ENV

pytestmark = pytest.mark.integration

# The worker's own setting: a whole bucket, and one folder of the payroll bucket.
WORKER_PLACES = "gs://team-media,gs://payroll-bucket/approved/"
PAYROLL = "gs://payroll-bucket/salaries.csv"
TEAM = "gs://team-media/notes.txt"
APPROVED = "gs://payroll-bucket/approved/summary.txt"


def document_row(row_id: str, document: object) -> dict[str, object]:
    return {"id": row_id, "prompt": "Summarise.", "response": "A summary.", "document": document}


def payroll_rows() -> list[dict[str, object]]:
    """The finding's object, plain and in the seeds' file_data form."""
    content = {"file_data": {"file_uri": PAYROLL, "mime_type": "text/csv"}}
    return [document_row("payroll-plain", PAYROLL), document_row("payroll-content", content)]


@pytest.fixture(scope="module")
def vertex(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with stack(
        tmp_path_factory.mktemp("gcs-media"), EVALQ_GCS_MEDIA=WORKER_PLACES, **VERTEX_ENV
    ) as s:
        yield s


def run(
    s: Stack,
    dataset: Path,
    judge: str,
    client_places: str,
    exit_code: int = exit_codes.OK,
    **env: str,
) -> tuple[str, str]:
    """`evalq run pointwise … --wait --json` with the client's EVALQ_GCS_MEDIA, ending with
    `exit_code`; (job id, stderr)."""
    client_env = s.env(EVALQ_GCS_MEDIA=client_places, COLUMNS="400", **env)
    done = run_evalq(
        client_env,
        "run",
        "pointwise",
        str(dataset),
        "--template",
        "summarization_quality",
        "--judge-model",
        judge,
        "--wait",
        "--json",
    )
    assert done.returncode == exit_code, done.stdout + done.stderr
    return json.loads(done.stdout)["job_id"], done.stderr


def sent_uris(s: Stack, judge: str) -> list[tuple[str, str]]:
    """(route, URI) of every fileData URI the fake received from `judge`'s requests."""
    events: list[dict[str, Any]] = s.stats()["events"]
    return [(e["route"], uri) for e in events if e["model"] == judge for uri in e["file_uris"]]


def row_outcomes(s: Stack, job_id: str) -> dict[str, tuple[str, str | None, str]]:
    return {r.id: (r.status, r.reason, r.error or "") for r in s.client().results(job_id)}


def refused_line(row_id: str, unset: bool) -> str:
    which = ", which is unset" if unset else ""
    return (
        f"row {row_id}: field 'document': {PAYROLL} is outside the Cloud Storage media allowed "
        f"by EVALQ_GCS_MEDIA{which}: list its bucket or folder there to judge it"
    )


def test_unset_no_gcs_media_is_judged_even_the_batch_prefix_bucket(
    vertex: Stack, tmp_path: Path
) -> None:
    dataset = write_rows(tmp_path / "rows.jsonl", [*payroll_rows(), document_row("team", TEAM)])
    batch_prefix = "gs://payroll-bucket/batches"  # not a media place for all that
    job_id, said = run(
        vertex,
        dataset,
        "judge-unset",
        "",
        exit_codes.NO_SCORED_ROW,
        EVALQ_VERTEX_BATCH_PREFIX=batch_prefix,
    )
    for line, row_id in enumerate(["payroll-plain", "payroll-content"], start=1):
        assert f"input error line {line}: {refused_line(row_id, unset=True)}" in said, said
    results = row_outcomes(vertex, job_id)
    assert {r[:2] for r in results.values()} == {("failed", "input_error")}
    assert all("EVALQ_GCS_MEDIA" in r[2] for r in results.values())
    assert sent_uris(vertex, "judge-unset") == []


def test_other_places_refuse_it_and_an_allowed_bucket_is_judged(
    vertex: Stack, tmp_path: Path
) -> None:
    dataset = write_rows(tmp_path / "rows.jsonl", [*payroll_rows(), document_row("team", TEAM)])
    job_id, said = run(vertex, dataset, "judge-other", "gs://team-media")
    for line, row_id in enumerate(["payroll-plain", "payroll-content"], start=1):
        assert f"input error line {line}: {refused_line(row_id, unset=False)}" in said, said
    results = row_outcomes(vertex, job_id)
    assert results["team"][0] == "scored", results["team"]
    for row_id in ("payroll-plain", "payroll-content"):
        assert results[row_id] == ("failed", "input_error", refused_line(row_id, unset=False))
    sent = sent_uris(vertex, "judge-other")
    assert sent and set(sent) == {("vertex", TEAM)}


def test_the_worker_refuses_what_a_wider_client_let_through(vertex: Stack, tmp_path: Path) -> None:
    """The client allows the whole payroll bucket; the worker only its approved/ folder."""
    rows = [*payroll_rows(), document_row("approved", APPROVED)]
    dataset = write_rows(tmp_path / "rows.jsonl", rows)
    job_id, said = run(vertex, dataset, "judge-wider", "gs://payroll-bucket")
    assert "input error" not in said, said  # the submitter let every row through
    results = row_outcomes(vertex, job_id)
    assert results["approved"][0] == "scored", results["approved"]
    for row_id in ("payroll-plain", "payroll-content"):
        status, reason, error = results[row_id]
        assert (status, reason) == ("failed", "input_error"), results[row_id]
        assert refused_line(row_id, unset=False) in error, error
    sent = sent_uris(vertex, "judge-wider")
    assert sent and set(sent) == {("vertex", APPROVED)}
