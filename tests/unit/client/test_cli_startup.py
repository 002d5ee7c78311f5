"""`evalq --help` loads only what printing the commands needs: not google-genai, Celery, Redis,
pydantic's models or numpy (which took about a second of CPU before any command ran); and
`evalq status JOB` only the client's reads: not google-genai, Celery, the batch modules, the
dataset loader, the metrics or the whole client. Checked by what a fresh interpreter
imported, not by a time."""

from __future__ import annotations

import json

from evalq.worker.lifecycle.job_end import finalize
from evalq.worker.store import Store
from tests.support.fresh_imports import modules_loaded
from tests.support.scratch import plant_job

HEAVY = (
    "google.genai",
    "celery",
    "redis",
    "evalq.core.models",
    "numpy",
    "evalq.worker.celery_app.app",
)
PROBE = f"""
import json, sys
from click.testing import CliRunner
from evalq.client.cli import main
result = CliRunner().invoke(main, ["--help"])
assert result.exit_code == 0, result.output
assert "status" in result.output and "run" in result.output
print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))
"""
# What `evalq status` of an online job must not load (prefixes of module names).
NOT_FOR_STATUS = (
    "google.genai",
    "celery",
    "kombu",
    "evalq.worker.celery_app.app",
    "evalq.worker.batch",
    "evalq.worker.judges.files",
    "evalq.client.client",
    "evalq.client.submit",
    "evalq.core.dataset",
    "evalq.core.options",
    "evalq.metrics",
    "pandas",
    "rich",  # the summary is drawn by evalq.client.output.terminal.text_table
)
STATUS_PROBE = """
import json, sys
from click.testing import CliRunner
from evalq.client.cli import main
result = CliRunner().invoke(main, ["status", sys.argv[1], "--redis-url", sys.argv[2]])
assert result.exit_code == 0, result.output
assert sys.argv[1] in result.output and sys.argv[4] in result.output, result.output
heavy = json.loads(sys.argv[3])
print(json.dumps(sorted(m for m in sys.modules if m.startswith(tuple(heavy)))))
"""

# What `evalq status` and `evalq results` of a job Redis has load: the CLI entry (all that
# evalq.__main__ imports before it runs the command), the command modules, the client modules
# the two commands import as they run, then both commands. The archive's SQLAlchemy and Alembic
# (about 0.4 s of a start) are for a job Redis no longer has.
THE_ARCHIVE = (
    "sqlalchemy",
    "alembic",
    "evalq.worker.archive.archive",
    "evalq.worker.archive.engine",
)
LIVE_READS_PROBE = """
import json, sys
import evalq.client.cli, evalq.client.cli.common, evalq.client.cli.read
import evalq.client.archive_notes, evalq.client.jobs.lookup, evalq.client.reads
import evalq.client.output.exports.csv_tables, evalq.client.output.exports.jsonl
import evalq.client.output.terminal.summary, evalq.client.output.terminal.tables
import evalq.client.workers_alive
from click.testing import CliRunner
from evalq.client.cli import main
for command in ("status", "results"):
    result = CliRunner().invoke(main, [command, sys.argv[1], "--redis-url", sys.argv[2]])
    assert result.exit_code == 0, result.output
heavy = json.loads(sys.argv[3])
print(json.dumps(sorted(m for m in sys.modules if m.startswith(tuple(heavy)))))
"""


# `evalq status` as the installed command runs it (cli_entry): the collector is off while the
# command loads, and turned back on, once, after the reads are loaded.
GC_PROBE = """
import gc, json, sys
from evalq.client.cli import cli_entry
loaded_when_enabled = []
enable = gc.enable
def spy():
    names = ("pydantic", "redis", "evalq.worker.store", "evalq.client.reads")
    loaded_when_enabled.append([m for m in names if m in sys.modules])
    enable()
gc.enable = spy
sys.argv = ["evalq", "status", sys.argv[1], "--redis-url", sys.argv[2], "--json"]
cli_entry()
state = [gc.isenabled(), gc.get_freeze_count() > 0, loaded_when_enabled]
print(json.dumps(state))
"""


# After `run --wait` or `wait` says it waits, a Ctrl-C must find no import running (one that
# lands inside an import can end the process by the signal, not with exit 130): waiting imports
# nothing ready_to_wait did not load.
WAIT_PROBE = """
import json, sys
from evalq.client.cli.common import make_reader
from evalq.client.cli.submit import ready_to_wait, wait_with_progress
reader = make_reader(sys.argv[2])
total = reader.rows_total(sys.argv[1])  # as `evalq wait` does before it says it waits
ready_to_wait()
before = set(sys.modules)
wait_with_progress(reader, sys.argv[1], total, quiet=True)
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_help_loads_none_of_the_heavy_modules() -> None:
    assert modules_loaded(PROBE) == []


def test_status_loads_only_the_reads(store: Store, scratch_url: str) -> None:
    job_id = plant_job(store, 0)
    finalize(store, job_id)
    assert (
        modules_loaded(STATUS_PROBE, job_id, scratch_url, json.dumps(NOT_FOR_STATUS), "finished")
        == []
    )


def test_status_of_a_running_job_without_human_labels_loads_no_agreement_statistics(
    store: Store, scratch_url: str
) -> None:
    """A running job's summary is built on every `evalq status`; numpy and the agreement
    bootstraps are for jobs with human labels only."""
    job_id = plant_job(store, 3)
    agreement = (
        "numpy",
        "evalq.core.human.agreement",
        "evalq.core.human.estimate",
        "evalq.core.human.rank_correlation",
        "evalq.core.human.pairwise_accuracy",
        "evalq.core.human.label_stats",
    )
    assert modules_loaded(STATUS_PROBE, job_id, scratch_url, json.dumps(agreement), "running") == []


def test_status_and_results_of_a_job_redis_has_load_no_sqlalchemy(
    store: Store, scratch_url: str
) -> None:
    job_id = plant_job(store, 0)
    finalize(store, job_id)
    assert modules_loaded(LIVE_READS_PROBE, job_id, scratch_url, json.dumps(THE_ARCHIVE)) == []


def test_status_collects_no_garbage_while_it_loads_and_does_after(
    store: Store, scratch_url: str
) -> None:
    job_id = plant_job(store, 0)
    finalize(store, job_id)
    enabled, frozen, loaded_when_enabled = modules_loaded(GC_PROBE, job_id, scratch_url)
    assert enabled and frozen
    assert loaded_when_enabled == [
        ["pydantic", "redis", "evalq.worker.store", "evalq.client.reads"]
    ]


def test_waiting_imports_nothing_once_the_command_says_it_waits(
    store: Store, scratch_url: str
) -> None:
    job_id = plant_job(store, 0)
    finalize(store, job_id)
    assert modules_loaded(WAIT_PROBE, job_id, scratch_url) == []
