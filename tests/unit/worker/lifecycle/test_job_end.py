"""A finished job's summary against its spend: a call in flight when the job ended (a re-driven
row's duplicate) is billed after the summary was written, and must still count."""

from __future__ import annotations

from evalq.core.models import RowResult
from evalq.core.pricing import Usage
from evalq.worker.lifecycle.job_end import current_summary, finalize
from evalq.worker.store import Store
from tests.support.scratch import plant_job


def _ended_with_two_calls(store: Store) -> str:
    job = plant_job(store, 1)
    store.account(job, {"judge_calls": 2, "prompt_tokens": 20})
    store.finish_row(job, RowResult(id="r0", line=1, prompt="p", status="scored", score=1.0))
    assert finalize(store, job).status == "finished"
    return job


def test_spend_after_the_end_shows_in_the_summary(store: Store) -> None:
    job = _ended_with_two_calls(store)
    assert current_summary(store, job).judge_calls == 2
    usage = Usage(role="judge", model="gemini-2.5-flash", calls=1, prompt=10)
    usage.cost_nanos = 5000
    store.account(job, {"judge_calls": 1, "prompt_tokens": 10}, usage)  # the late call
    summary = current_summary(store, job)
    assert (summary.judge_calls, summary.prompt_tokens) == (3, 30)
    assert summary.spent_usd == 5e-6
    assert summary.status == "finished" and summary.rows_done == 1


def test_a_summary_with_all_its_spend_is_the_one_stored(store: Store) -> None:
    job = _ended_with_two_calls(store)
    stored = store.summary_json(job)
    assert stored is not None
    assert current_summary(store, job).model_dump_json() == stored
