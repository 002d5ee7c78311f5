"""Cloud Storage (evalq.worker.batch.gcs) is loaded when a Vertex AI batch first needs it: a worker
imports its app, its task modules and what it starts at ready without google-cloud-storage
(about a quarter of a second of every worker start). Checked by what a fresh interpreter
imported, not by a time."""

from __future__ import annotations

from tests.support.fresh_imports import modules_loaded

WORKER_START_PROBE = """
import json, sys
import evalq.worker.celery_app.app, evalq.tasks.rows, evalq.tasks.batch  # `celery -A evalq.worker.celery_app.app worker` and its includes
import evalq.worker.jobs.archiving, evalq.worker.dispatch.heartbeat, evalq.worker.runtime, evalq.worker.jobs.watchdog  # at worker_ready
from evalq.worker.batch import gcs
assert gcs.GcsPath.parse("gs://evalq-batches/jobs").join("a").uri == "gs://evalq-batches/jobs/a"
print(json.dumps(sorted(m for m in sys.modules if m.startswith("google.cloud.storage"))))
"""


def test_a_worker_starts_without_loading_cloud_storage() -> None:
    assert modules_loaded(WORKER_START_PROBE) == []
