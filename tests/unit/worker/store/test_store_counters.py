"""A job's counters read back typed (evalq.worker.store.counters ->
evalq.core.counters.JobCounters), and the one path that adds to them (incr, account) on a job Redis
lost."""

from __future__ import annotations

from evalq.core.models import TaskErrors
from evalq.core.pricing import Usage
from evalq.worker.store import Store, keys, read_counters
from tests.support.scratch import plant_job


def test_a_field_the_counters_do_not_know_is_ignored() -> None:
    counters = read_counters(
        {"status": "running", "rows_done": "3", "a_counter_from_next_year": "7", "config": "{}"}
    )
    assert (counters.status, counters.rows_done) == ("running", 3)
    assert "a_counter_from_next_year" not in counters.model_dump()


def test_usage_failures_scores_and_task_errors_are_read() -> None:
    counters = read_counters(
        {
            "status": "paused",
            "pause_reason": "spend cap",
            "finished_at": "",
            "usage:judge:calls:gemini-2.5-flash": "2",
            "usage:judge:prompt:gemini-2.5-flash": "120",
            "usage:judge:cost_nanos:gemini-2.5-flash": "900",
            "usage:judge:bogus_kind:gemini-2.5-flash": "5",  # no such kind: not usage
            "failed:input_error": "2",
            "score_sum": "1.5",
            "score_count": "2",
            "spent_nanos": "900",
            "budget_nanos": "1000",
            keys.TASK_ERRORS: "1",
            keys.TASK_ERROR_LAST: "KeyError: 'x'",
            keys.TASK_ERROR_TASK: "run_unit",
            keys.TASK_ERROR_AT: "12.5",
        }
    )
    assert counters.usage == [
        Usage(role="judge", model="gemini-2.5-flash", calls=2, prompt=120, cost_nanos=900)
    ]
    assert counters.failed_by_reason == {"input_error": 2}
    assert counters.mean_score == 0.75
    assert (counters.spent_nanos, counters.budget_nanos) == (900, 1000)
    assert (counters.pause_reason, counters.finished_at) == ("spend cap", None)
    assert counters.task_errors == TaskErrors(
        count=1, last_error="KeyError: 'x'", task="run_unit", at=12.5
    )


def test_counters_are_read_from_the_job_hash(store: Store) -> None:
    job = plant_job(store, 2)
    usage = Usage(role="judge", model="m", calls=1, prompt=10, output=2, cost_nanos=50)
    assert store.account(job, {"judge_calls": 1, "prompt_tokens": 10}, usage) == (50, None)
    counters = store.counters(job)
    assert (counters.status, counters.judge_calls, counters.prompt_tokens) == ("running", 1, 10)
    assert (counters.spent_nanos, counters.usage, counters.task_errors) == (50, [usage], None)


def test_incr_and_account_never_recreate_a_vanished_job(store: Store) -> None:
    job = plant_job(store, 1)
    store.incr(job, judge_calls=1)
    assert 0 < store.r.ttl(keys.job(job)) <= store.ttl_s  # counting keeps the expiry set
    store.r.delete(keys.job(job))  # Redis lost the job (restarted without its data)
    store.incr(job, judge_calls=1, prompt_tokens=40)
    assert not store.r.exists(keys.job(job))
    usage = Usage(role="judge", model="m", calls=1, prompt=40, cost_nanos=70)
    assert store.account(job, {"judge_calls": 1}, usage) == (0, None)
    assert not store.r.exists(keys.job(job))
