"""Matching a batch's results to its requests (evalq.worker.batch.service._store_results) against a
real Redis: by key only, whatever the order; what can't be matched is counted and never used;
transient errors and missing results go into a bounded number of further batches."""

from __future__ import annotations

import json
import uuid

from evalq.worker.batch.reading import ResultEntry, file_results
from evalq.worker.batch.service import _store_results, _Writer
from evalq.worker.store import Store

OK = {"response": {"candidates": [{"content": {"parts": [{"text": "yes"}]}}]}}


def ingest(
    store: Store, job: str, batch: str, entries: list[ResultEntry], sent: set[str]
) -> dict[str, int]:
    tally = _store_results(_Writer(store, job, batch, retries_max=1), iter(entries), sent)
    return {k: v for k, v in vars(tally).items() if v and isinstance(v, int)}


def stored(store: Store, job: str, digest: str) -> dict[str, object] | None:
    raw = store.batch_reply(job, digest)
    return None if raw is None else json.loads(raw)


def test_results_are_matched_by_key_and_the_rest_is_counted_never_used(store: Store) -> None:
    job = uuid.uuid4().hex[:12]
    lines = [
        json.dumps({"key": "d3", **OK}),  # out of order
        json.dumps({"key": "zz", **OK}),  # a key this batch never sent
        json.dumps(OK),  # no key at all
        json.dumps({"key": "d1", "error": {"code": 3, "message": "bad request"}}),
        json.dumps({"key": "d3", "error": {"code": 13, "message": "a second result for d3"}}),
        '{"key": "d2", "response": {"cand',  # not JSON, its key still readable
        "garbage with no key",
    ]
    tally = ingest(store, job, "r1-0", list(file_results(lines)), {"d1", "d2", "d3", "d4"})
    assert tally == {
        "failed": 2,
        "unmatched": 1,
        "unknown": 1,
        "unreadable": 1,
        "conflicts": 1,  # d3, answered twice: neither answer used, asked again
        "online": 1,  # beside a result with no key: asked online once, never batched again
    }
    assert stored(store, job, "d3") is None
    d1 = stored(store, job, "d1")
    assert d1 is not None and d1["error"] == {
        "code": 3,
        "status": "INVALID_ARGUMENT",
        "message": "bad request",
    }
    d2 = stored(store, job, "d2")
    assert d2 is not None and "results line 6 is not JSON" in str(d2["error"])
    assert stored(store, job, "d4") == {  # it may be what the keyless result answered
        "online": "1 results of the batch came back without a key; matching by position is "
        "never done"
    }
    assert stored(store, job, "zz") is None


def test_requests_left_beside_keyless_results_are_answered_online_never_batched_again(
    store: Store,
) -> None:
    """A result that names no request was billed for one of those left unanswered;
    which one is unknown, so none goes into another batch (none is matched by position)."""
    job = uuid.uuid4().hex[:12]
    lines = [json.dumps(OK), json.dumps({"key": "d1", **OK})]
    assert ingest(store, job, "r1-0", list(file_results(lines)), {"d1", "d2", "d3"}) == {
        "answered": 1,
        "unmatched": 1,
        "online": 2,
    }
    assert stored(store, job, "d1") == OK
    assert all("online" in (stored(store, job, d) or {}) for d in ("d2", "d3"))


def test_a_transient_error_goes_into_one_more_batch_then_is_the_answer(store: Store) -> None:
    job = uuid.uuid4().hex[:12]
    busy = [ResultEntry(1, "d1", {"error": {"code": 14, "status": None, "message": "busy"}})]
    assert ingest(store, job, "r1-0", busy, {"d1"}) == {"retried": 1}
    assert ingest(store, job, "r1-0", busy, {"d1"}) == {"retried": 1}  # the same batch again
    assert stored(store, job, "d1") is None
    assert ingest(store, job, "r2-0", busy, {"d1"}) == {"failed": 1}
    final = stored(store, job, "d1")
    assert final is not None and final["error"]["message"] == "busy (in 2 batches)"


def test_a_request_given_no_result_twice_fails_saying_so(store: Store) -> None:
    job = uuid.uuid4().hex[:12]
    assert ingest(store, job, "r1-0", [], {"d1"}) == {"retried": 1, "missing": 1}
    assert ingest(store, job, "r2-0", [], {"d1"}) == {"failed": 1, "missing": 1}
    final = stored(store, job, "d1")
    assert final is not None and "returned no result" in final["error"]["message"]


def test_results_never_used_still_count_what_they_billed(store: Store) -> None:
    """A reply is paid for whether or not it can be matched to a request."""
    job = uuid.uuid4().hex[:12]
    usage = {"promptTokenCount": 120, "candidatesTokenCount": 7, "thoughtsTokenCount": 30}
    billed = {"response": {**OK["response"], "usageMetadata": usage}}
    lines = [
        json.dumps(billed),
        json.dumps({"key": "zz", **billed}),
        json.dumps({"key": "d1", **billed}),
    ]
    writer = _Writer(store, job, "r1-0", retries_max=1)
    tally = _store_results(writer, iter(file_results(lines)), {"d1"})
    assert (tally.unmatched, tally.unknown, tally.answered, tally.unused_calls) == (1, 1, 1, 2)
    spent = tally.unused_usage
    assert (spent.prompt_tokens, spent.output_tokens, spent.thought_tokens) == (240, 14, 60)


def billed_line(key: str, answer: str, prompt: int, output: int) -> str:
    usage = {"promptTokenCount": prompt, "candidatesTokenCount": output}
    response = {"candidates": [{"content": {"parts": [{"text": answer}]}}], "usageMetadata": usage}
    return json.dumps({"key": key, "response": response})


def test_a_key_answered_twice_is_asked_again_once_then_unscored_and_billed_at_its_least(
    store: Store,
) -> None:
    """A key answered twice in one results file (or across files, which read as one stream):
    no answer of it is used and nothing is stored, so the next sweep asks it again in a new
    batch; answered twice again there, it is stored as a failure (unscored, with the reason).
    Of a key's lines, only the smallest usage claimed is billed, once per key."""
    job = uuid.uuid4().hex[:12]
    first = [
        billed_line("d1", "yes", 10, 5),
        billed_line("d2", "yes", 10, 5),
        billed_line("d1", "no", 1, 1),  # added by someone else: claims less
    ]
    writer = _Writer(store, job, "r1-0", retries_max=1)
    tally = _store_results(writer, iter(file_results(first)), {"d1", "d2"})
    assert (tally.answered, tally.conflicts, tally.conflicts_unscored) == (1, 1, 0)
    assert stored(store, job, "d1") is None and stored(store, job, "d2") is not None
    assert tally.unused_calls == 1
    assert (tally.unused_usage.prompt_tokens, tally.unused_usage.output_tokens) == (1, 1)
    # Ingesting the same batch again (a worker killed mid-ingest) counts the conflict once.
    again = _store_results(_Writer(store, job, "r1-0", 1), iter(file_results(first)), {"d1"})
    assert (again.conflicts, again.conflicts_unscored) == (1, 0)
    second = [billed_line("d1", "yes", 10, 5), billed_line("d1", "yes", 50, 50)]
    tally = _store_results(_Writer(store, job, "r2-0", 1), iter(file_results(second)), {"d1"})
    assert (tally.conflicts, tally.conflicts_unscored, tally.failed) == (0, 1, 1)
    assert (tally.unused_usage.prompt_tokens, tally.unused_usage.output_tokens) == (10, 5)
    d1 = stored(store, job, "d1")
    assert d1 is not None and d1["error"]["status"] == "CONFLICTING_RESULTS"
    assert "neither answer was used" in d1["error"]["message"]
