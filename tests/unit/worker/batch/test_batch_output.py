"""Where a Vertex AI batch's results are read from (evalq.worker.batch.gcs, evalq.worker.batch.vertex):
only the names Vertex gives its results files, directly in the folder the batch prediction job
reports, and only when that folder lies in the batch's own; and a job's own prefix only under
the workers' EVALQ_VERTEX_BATCH_PREFIX. Against a real Cloud Storage emulator."""

from __future__ import annotations

import pytest
from google.cloud import storage

from devtools.local import GcsEmulator
from evalq.worker.batch import gcs
from evalq.worker.batch.gcs import GcsPath
from evalq.worker.batch.reading import BatchView, OutputElsewhere
from evalq.worker.batch.service import outside_prefix
from evalq.worker.batch.vertex import VertexBackend
from evalq.worker.settings import Settings

BUCKET = "evalq-batches"


def test_only_vertex_results_files_directly_in_the_folder_are_read(
    gcs_emulator: GcsEmulator,
) -> None:
    client = storage.Client(project="evalq-test")
    folder = "unit-output/evalq-job-r1-0/prediction-model-1"
    names = [
        "predictions.jsonl",
        "predictions_00001.jsonl",
        "predictions_0002.jsonl",
        "predictions-0.jsonl",  # sorts before Vertex's own: planted
        "predictions_1.jsonl",
        "predictions.jsonl.bak",
        "sub/predictions.jsonl",
    ]
    for name in names:
        client.bucket(BUCKET).blob(f"{folder}/{name}").upload_from_string("{}\n")
    client.bucket(BUCKET).blob(f"{folder}-other/predictions.jsonl").upload_from_string("{}\n")
    found = gcs.output_files(client, GcsPath(BUCKET, folder))
    assert [f.name.rsplit("/", 1)[1] for f in found.results] == [
        "predictions.jsonl",
        "predictions_00001.jsonl",
        "predictions_0002.jsonl",
    ]
    assert found.ignored == [
        "predictions-0.jsonl",
        "predictions.jsonl.bak",
        "predictions_1.jsonl",
        "sub/predictions.jsonl",
    ]


def _never() -> storage.Client:
    raise AssertionError("Cloud Storage must not be reached for output outside the batch")


@pytest.mark.parametrize(
    "reported",
    [
        f"gs://{BUCKET}/runs/evalq-other-r1-0/prediction-model-1",  # another batch's folder
        f"gs://{BUCKET}/runs/evalq-job-r1-0",  # the batch's folder itself (its requests)
        f"gs://{BUCKET}/runs/evalq-job-r1-0-x/prediction-model-1",  # a look-alike sibling
        "gs://another-bucket/runs/evalq-job-r1-0/prediction-model-1",
    ],
)
def test_output_reported_outside_the_batch_folder_is_never_read(reported: str) -> None:
    backend = VertexBackend(None, _never, GcsPath.parse(f"gs://{BUCKET}/runs"))  # type: ignore[arg-type]
    view = BatchView("jobs/1", "evalq-job-r1-0", "SUCCEEDED", 1, 0, None, None, None, reported)
    with pytest.raises(OutputElsewhere, match="outside the folder evalq named for it"):
        list(backend.results(view, 1 << 20))
    with pytest.raises(OutputElsewhere):
        backend.ignored_objects(view)


def test_a_job_prefix_must_lie_under_the_workers_prefix() -> None:
    workers = Settings(vertex_batch_prefix=f"gs://{BUCKET}/runs")
    for inside in (f"gs://{BUCKET}/runs", f"gs://{BUCKET}/runs/team-a", f"gs://{BUCKET}/runs/"):
        assert outside_prefix(workers, inside) is None
    for outside in (f"gs://{BUCKET}/runs-evil", f"gs://{BUCKET}", "gs://another-bucket/runs"):
        refusal = outside_prefix(workers, outside)
        assert refusal is not None
        assert f"--vertex-batch-prefix={outside} is not under " in refusal
        assert f"EVALQ_VERTEX_BATCH_PREFIX=gs://{BUCKET}/runs" in refusal
    assert outside_prefix(Settings(vertex_batch_prefix=None), "gs://anywhere/x") is None
