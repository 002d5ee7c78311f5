"""Every way a verdict is stored stamps it with the model version its replies reported: a
run_unit task, prepare_row answering a unit from the call cache, a cut-off reply's unscored
verdict, and a batch-mode sweep; the row's result names the versions per judge model. Run
in-process against a real Redis and the fake server (tests/support/task_runner.py); the
versions come from script rules, so the shared fake's own version is left alone."""

from __future__ import annotations

from evalq.worker.store import RowRef
from tests.conftest import FakeGemini
from tests.support.rating_replies import rating
from tests.support.task_runner import TaskRunner

RUNNER_DB = 10
JUDGE = "gemini-2.5-flash"
RUNNER_ENV = {"EVALQ_JUDGE_MODEL": JUDGE}


def stored_versions(runner: TaskRunner, job: str) -> list[str | None]:
    return [v.model_version for _, v in sorted(runner.store.verdicts(RowRef(job, "1")).items())]


def row_versions(runner: TaskRunner, job: str) -> dict[str, str]:
    (row,) = runner.client.results(job)
    return row.model_versions


def test_unit_tasks_and_units_answered_from_the_cache_record_the_version(
    runner: TaskRunner, fake: FakeGemini
) -> None:
    fake.script([{"match": "Rv-online", "reply": rating(4), "model_version": "flash-002"}])
    first = runner.submit_pointwise("Rv-online", samples=2)
    ran = runner.drain()
    assert [o.call.task.rsplit(".", 1)[-1] for o in ran].count("run_unit") == 2
    assert stored_versions(runner, first) == ["flash-002", "flash-002"]
    assert row_versions(runner, first) == {JUDGE: "flash-002"}
    # Again with the cache: prepare_row answers both units itself, from the cached replies.
    fake.script([{"match": "Rv-online", "reply": rating(4), "model_version": "flash-003"}])
    second = runner.submit_pointwise("Rv-online", samples=2)
    ran = runner.drain()
    assert [o.call.task.rsplit(".", 1)[-1] for o in ran] == ["prepare_row"]
    assert stored_versions(runner, second) == ["flash-002", "flash-002"]  # what answered then
    summary = runner.client.summary(second)
    assert summary.judge_setup["model_versions"] == {JUDGE: "flash-002"}


def test_a_cut_off_reply_is_unscored_with_its_version(runner: TaskRunner, fake: FakeGemini) -> None:
    fake.script(
        [
            {
                "match": "Rv-cut",
                "reply": rating(4),
                "finish_reason": "MAX_TOKENS",
                "model_version": "v-cut",
            }
        ]
    )
    job = runner.submit_pointwise("Rv-cut", samples=2, use_cache=False)
    runner.drain()
    verdicts = runner.store.verdicts(RowRef(job, "1")).values()
    assert {(v.reason, v.model_version) for v in verdicts} == {("truncated", "v-cut")}
    assert row_versions(runner, job) == {JUDGE: "v-cut"}


def test_a_batch_sweep_records_the_version(runner: TaskRunner, fake: FakeGemini) -> None:
    fake.script([{"match": "Rv-batch", "reply": rating(3), "model_version": "flash-batch"}])
    job = runner.submit_pointwise("Rv-batch", samples=2, mode="batch", use_cache=False)
    while runner.queue:
        runner.next_settled()
    assert runner.client.summary(job).status == "finished"
    assert stored_versions(runner, job) == ["flash-batch", "flash-batch"]
    assert row_versions(runner, job) == {JUDGE: "flash-batch"}
