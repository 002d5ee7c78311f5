"""Cached work does not become tasks: prepare_row answers from the call cache (or from verdicts
already stored) every unit it can, sends only the others as run_unit tasks, and aggregates a
row with nothing left to ask at once. Run in-process against a real Redis and the fake server
(tests/support/task_runner.py)."""

from __future__ import annotations

from evalq.worker.store import RowRef
from tests.conftest import FakeGemini
from tests.support.grounding import CONTEXT, QUERY, labels
from tests.support.rating_replies import rating
from tests.support.results import scores
from tests.support.task_runner import Outcome, TaskRunner
from tests.unit.tasks.conftest import RunnerOn

RUNNER_DB = 12


def cached(runner: TaskRunner, fake: FakeGemini, text: str, value: int, samples: int = 2) -> str:
    """A first job run to its end, so the call cache holds its one row's replies (each rated
    `value`) when the test submits it again; returns the first job's id."""
    fake.script([{"match": text, "reply": rating(value)}])
    job = runner.submit_pointwise(text, samples=samples)
    runner.drain()
    return job


def delivered_twice(
    runner: TaskRunner, fake: FakeGemini, text: str, value: int, samples: int
) -> tuple[str, Outcome, Outcome]:
    """A job of `samples` samples of a row whose first two are cached (rated `value`): its
    prepare_row run, then delivered and run again. The job, and the two runs."""
    cached(runner, fake, text, value)
    job = runner.submit_pointwise(text, samples=samples)
    call = runner.queue.popleft()
    return job, runner.run(call), runner.run(call)


def names(outcomes: list[Outcome]) -> list[str]:
    return [o.call.task.rsplit(".", 1)[-1] for o in outcomes]


def test_a_cached_rerun_sends_no_unit_task_and_scores_the_same(
    runner: TaskRunner, fake: FakeGemini
) -> None:
    fake.script(
        [
            {"match": "Il-rerun response 0", "reply": rating(2)},
            {"match": "Il-rerun response 1", "reply": rating(5)},
        ]
    )
    first = runner.submit_pointwise("Il-rerun", rows=2, samples=2)
    runner.drain()
    asked = fake.stats()["requests"]
    assert asked == 4

    second = runner.submit_pointwise("Il-rerun", rows=2, samples=2)
    ran = runner.drain()
    assert names(ran) == ["prepare_row", "prepare_row"]  # no run_unit, no chord callback
    assert [o.value for o in ran] == [
        {"row": "1", "status": "scored", "units": 0},
        {"row": "2", "status": "scored", "units": 0},
    ]
    assert not runner.chords[2:]
    assert fake.stats()["requests"] == asked
    before, after = runner.client.summary(first), runner.client.summary(second)
    assert (before.unit_tasks, before.units_inline, before.cache_hits) == (4, 0, 0)
    assert (after.unit_tasks, after.units_inline, after.cache_hits) == (0, 4, 4)
    assert (after.judge_calls, after.status, after.rows_scored) == (0, "finished", 2)
    assert scores(runner.client, second) == scores(runner.client, first)
    assert after.mean_score == before.mean_score


def test_a_partly_cached_row_sends_only_its_uncached_units(
    runner: TaskRunner, fake: FakeGemini
) -> None:
    cached(runner, fake, "Il-part", 4)
    job = runner.submit_pointwise("Il-part", samples=3)  # samples 0 and 1 are cached, 2 is not
    prepared = runner.next()
    assert prepared.value == {"row": "1", "units": 1}
    assert [c.args for c in runner.chords[-1].header] == [(job, "1", 2)]
    assert set(runner.store.verdicts(RowRef(job, "1"))) == {0, 1}  # answered inline
    assert names(runner.drain()) == ["run_unit", "aggregate_row"]
    summary = runner.client.summary(job)
    assert (summary.unit_tasks, summary.units_inline, summary.cache_hits) == (1, 2, 2)
    assert (summary.judge_calls, summary.rows_scored) == (1, 1)
    assert fake.stats()["requests"] == 3


def test_a_redelivered_prepare_row_counts_nothing_twice(
    runner: TaskRunner, fake: FakeGemini
) -> None:
    job, first_delivery, redelivery = delivered_twice(runner, fake, "Il-again", 3, samples=3)
    assert first_delivery.value == redelivery.value == {"row": "1", "units": 1}
    again, first = runner.chords[-1], runner.chords[-2]
    assert [c.args for c in again.header] == [c.args for c in first.header] == [(job, "1", 2)]
    summary = runner.client.summary(job)
    # Answered inline once; unit_tasks counts messages sent, and each delivery sent its chord.
    assert (summary.units_inline, summary.cache_hits, summary.unit_tasks) == (2, 2, 2)
    runner.drain()
    summary = runner.client.summary(job)
    assert (summary.rows_done, summary.judge_calls, summary.units_inline) == (1, 1, 2)
    assert fake.stats()["requests"] == 3  # the redelivery asked nothing


def test_a_redelivered_prepare_row_of_a_row_answered_inline_counts_it_once(
    runner: TaskRunner, fake: FakeGemini
) -> None:
    job, first_delivery, redelivery = delivered_twice(runner, fake, "Il-whole", 5, samples=2)
    assert first_delivery.value == {"row": "1", "status": "scored", "units": 0}
    assert redelivery.value == {"row": "1", "skipped": True}
    summary = runner.client.summary(job)
    assert (summary.rows_done, summary.units_inline, summary.cache_hits) == (1, 2, 2)
    assert (summary.unit_tasks, summary.status) == (0, "finished")


def test_a_no_cache_job_takes_nothing_from_the_cache_but_keeps_its_own_verdicts(
    runner: TaskRunner, fake: FakeGemini
) -> None:
    cached(runner, fake, "Il-fresh", 4)
    asked = fake.stats()["requests"]
    job = runner.submit_pointwise("Il-fresh", samples=2, use_cache=False)
    prepare = runner.queue.popleft()
    assert runner.run(prepare).value == {"row": "1", "units": 2}
    first = runner.queue.popleft()
    assert runner.run(first).value == {"index": 0, "status": "ok"}
    # Redelivered after one unit answered: only the other goes out again.
    assert runner.run(prepare).value == {"row": "1", "units": 1}
    assert [c.args for c in runner.chords[-1].header] == [(job, "1", 1)]
    runner.drain()
    summary = runner.client.summary(job)
    assert (summary.units_inline, summary.cache_hits, summary.rows_done) == (0, 0, 1)
    assert summary.judge_calls == 2 == fake.stats()["requests"] - asked


def test_a_unit_of_two_calls_is_answered_inline_from_both_cached_replies(
    runner: TaskRunner, fake: FakeGemini
) -> None:
    """A groundedness judge that left a sentence out is asked again: the unit's second call
    depends on the first reply, so prepare_row reads it after the row's one MGET, on its own."""
    bananas = ("Bananas are yellow.", "supported", "Bananas are yellow fruits.")
    fake.script(
        [
            {"match": "kind=unlabelled_sentences", "reply": labels(bananas)},
            {"match": "Il-two", "reply": labels(("Apples are red.", "supported", None))},
        ]
    )
    response = "Apples are red. Bananas are yellow."
    row = {"id": "g", "query": f"{QUERY} (Il-two)", "context": CONTEXT, "response": response}
    first = runner.submit("groundedness", [row])
    runner.drain()
    assert fake.stats()["requests"] == 2  # the labelling, and the re-ask for the bananas

    second = runner.submit("groundedness", [row])
    ran = runner.drain()
    assert names(ran) == ["prepare_row"]
    assert fake.stats()["requests"] == 2
    after = runner.client.summary(second)
    assert (after.unit_tasks, after.units_inline, after.cache_hits) == (0, 1, 2)
    assert scores(runner.client, second) == scores(runner.client, first)
    assert scores(runner.client, first)[0][1] == "scored"


def test_a_row_answered_inline_is_recorded_after_redis_lost_its_scripts(
    runner: TaskRunner, fake: FakeGemini
) -> None:
    """The row's answers go out as one pipeline of EVALSHAs: with the script cache empty (a
    restarted Redis), the script is loaded again and every answer recorded once."""
    first = cached(runner, fake, "Il-flush", 3, samples=3)
    runner.store.r.script_flush()
    second = runner.submit_pointwise("Il-flush", samples=3)
    assert names(runner.drain()) == ["prepare_row"]
    after = runner.client.summary(second)
    assert (after.unit_tasks, after.units_inline, after.cache_hits) == (0, 3, 3)
    assert scores(runner.client, second) == scores(runner.client, first)


def test_a_row_answered_from_the_cache_hands_its_turn_to_the_next_row(
    runner_on: RunnerOn, fake: FakeGemini
) -> None:
    """A cached rerun larger than the turn window: each row prepare_row finishes itself frees
    its turn for a waiting row at once, not at the watchdog's next sweep (which makes a 100-row
    cached rerun on one worker take 17 s instead of about one)."""
    runner = runner_on(RUNNER_DB, EVALQ_TURN_WINDOW="1", EVALQ_TURN_WINDOW_MIN="1")
    fake.script([{"match": "Il-turns", "reply": rating(3)}])
    runner.submit_pointwise("Il-turns", rows=3, samples=1)
    runner.drain()
    second = runner.submit_pointwise("Il-turns", rows=3, samples=1)
    assert len(runner.queue) == 1  # the window: one row at a time
    ran = runner.drain()
    assert names(ran) == ["prepare_row"] * 3  # each handed the next its turn
    summary = runner.client.summary(second)
    assert (summary.status, summary.rows_done, summary.units_inline) == ("finished", 3, 3)
