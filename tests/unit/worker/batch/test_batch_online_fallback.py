"""Batch mode's one online answer to a request whose batch results came back with no key
(evalq.worker.batch.judge.BatchReplyJudge), against a real Redis: a final failure is kept, so it is
never asked again; a failure that means "not now" (a cap busy, a job paused or cancelled at
the gate, a rate limit) is not, so a later sweep asks."""

from __future__ import annotations

import json

from evalq.core.errors import BadRequest, CapBusy, JobHalted, JudgeError, RateLimited
from evalq.core.judge import JudgeReply, JudgeRequest
from evalq.worker.batch.judge import BatchReplyJudge, Collector
from evalq.worker.judges.call_cache import call_digest
from evalq.worker.store import Store
from tests.support.scratch import plant_job

MODEL = "gemini-2.5-flash"
REQUEST = JudgeRequest("Is it red?")


class Online:
    """The online judge: raises each error given, in turn, then answers."""

    def __init__(self, *errors: JudgeError) -> None:
        self.errors = list(errors)
        self.calls = 0

    def generate(self, request: JudgeRequest) -> JudgeReply:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return JudgeReply("yes", MODEL, None, 10, 1, "STOP")


def fallback(store: Store, online: Online) -> BatchReplyJudge:
    job = plant_job(store, 1)
    digest = call_digest(MODEL, REQUEST)
    store.save_batch_replies(job, {digest: json.dumps({"online": "no key came back"})})
    collector = Collector(lambda _: "", 1024)
    return BatchReplyJudge(MODEL, store, job, "1", collector, online=lambda: online)


def asked(judge: BatchReplyJudge) -> JudgeReply | JudgeError:
    try:
        return judge.generate(REQUEST)
    except JudgeError as exc:
        return exc


def test_a_not_now_failure_is_asked_again_and_the_answer_then_kept(store: Store) -> None:
    not_now = [
        CapBusy("cap busy", 2.0),
        JobHalted("job cancelled: no new call is made"),
        RateLimited("429", 10.0),
    ]
    online = Online(*not_now)
    judge = fallback(store, online)
    for error in not_now:
        assert asked(judge) is error
    reply = asked(judge)
    assert isinstance(reply, JudgeReply) and reply.online and not reply.cached
    again = asked(judge)  # a later sweep: the kept answer, no call
    assert isinstance(again, JudgeReply) and again.cached
    assert online.calls == len(not_now) + 1


def test_a_final_failure_is_kept_and_never_asked_again(store: Store) -> None:
    online = Online(BadRequest("400 INVALID_ARGUMENT"))
    judge = fallback(store, online)
    assert isinstance(asked(judge), BadRequest)
    kept = asked(judge)
    assert isinstance(kept, JudgeError) and "400 INVALID_ARGUMENT" in kept.message
    assert online.calls == 1
