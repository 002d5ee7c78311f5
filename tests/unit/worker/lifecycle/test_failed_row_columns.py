"""A row that fails on a worker keeps the columns it was read with, against a real Redis: it
counts in its own --group-by group and its human label is read, as a scored row's would be."""

from __future__ import annotations

from evalq.core.groups import group_summaries
from evalq.worker.lifecycle.ending import fail_row
from evalq.worker.lifecycle.job_end import give_up
from evalq.worker.store import RowRef, Store
from tests.support.scratch import plant_job


def test_a_row_failed_by_its_task_or_by_the_watchdog_stays_in_its_group(store: Store) -> None:
    job = plant_job(store, 3, extra={"team": "support", "stars": "3"})
    fail_row(store, RowRef(job, "1"), "input_error", "row r0: field 'prompt': empty")
    give_up(store, RowRef(job, "2"), redrives=3)
    fail_row(store, RowRef(job, "3"), "judge_error", "the rubric could not be written")

    results = sorted(store.iter_results(job), key=lambda r: r.line)
    assert [r.status for r in results] == ["failed"] * 3
    assert [r.extra for r in results] == [{"team": "support", "stars": "3"}] * 3
    (group,) = group_summaries(results, ["team"])
    assert (group.value, group.rows, group.rows_scored) == ("support", 3, 0)
