"""The model version each reply reports (its modelVersion) reaches the unit's verdict: noted by
the accounting layer for every reply a judge reads (a cached one, a cut-off one), kept by the
call cache, and stamped on the verdict when it is recorded, unless the metric set one."""

from __future__ import annotations

from dataclasses import replace

import pytest

from evalq.core.errors import RateLimited, TruncatedReply
from evalq.core.judge import JudgeReply, JudgeRequest
from evalq.core.models import Verdict
from evalq.worker.judges.accounting import AccountingJudge
from evalq.worker.judges.call_cache import CachingJudge
from evalq.worker.lifecycle.units import with_version
from evalq.worker.store import Store
from evalq.worker.store.unit_writes import UnitWrites
from tests.support.memory_kv import MemoryKV

REPLY = JudgeReply(
    text="yes",
    model="flash",
    model_version="flash-002",
    prompt_tokens=5,
    output_tokens=1,
    finish_reason="STOP",
)


class Fixed:
    """Gives the same reply, or raises the same error, every time."""

    model = "flash"

    def __init__(self, reply: JudgeReply | Exception) -> None:
        self.reply = reply

    def generate(self, request: JudgeRequest) -> JudgeReply:
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


def accounted(
    reply: JudgeReply | Exception, role: str = "judge"
) -> tuple[AccountingJudge, UnitWrites]:
    writes = UnitWrites()
    store: Store = None  # type: ignore[assignment]  # held writes: the store is not reached
    return AccountingJudge(Fixed(reply), store, "job", role=role, writes=writes), writes


def test_every_reply_read_is_noted_cached_ones_too() -> None:
    judge, writes = accounted(REPLY)
    judge.generate(JudgeRequest(prompt="p"))
    cached, cached_writes = accounted(replace(REPLY, model_version="flash-001", cached=True))
    cached.generate(JudgeRequest(prompt="p"))
    assert (writes.version(), cached_writes.version()) == ("flash-002", "flash-001")


def test_a_cut_off_reply_is_noted_before_it_is_refused() -> None:
    judge, writes = accounted(replace(REPLY, finish_reason="MAX_TOKENS"))
    with pytest.raises(TruncatedReply):
        judge.generate(JudgeRequest(prompt="p"))
    assert writes.version() == "flash-002"


def test_no_reply_no_version_and_the_model_under_test_is_no_judge() -> None:
    failed, failed_writes = accounted(RateLimited("429", retry_after_s=1.0))
    with pytest.raises(RateLimited):
        failed.generate(JudgeRequest(prompt="p"))
    candidate, candidate_writes = accounted(REPLY, role="candidate")
    candidate.generate(JudgeRequest(prompt="p"))
    assert failed_writes.version() is None and candidate_writes.version() is None


def test_a_unit_that_read_two_versions_records_both() -> None:
    writes = UnitWrites(versions={"flash-002", "flash-001"})
    assert writes.version() == "flash-001,flash-002"
    writes.clear()
    assert writes.version() is None


def test_the_verdict_is_stamped_unless_its_metric_set_a_version() -> None:
    plain = Verdict(index=0, status="ok", answer="yes")
    stamped = with_version(plain, UnitWrites(versions={"flash-002"}))
    assert stamped is not None and stamped.model_version == "flash-002"
    own = plain.model_copy(update={"model_version": "metric-said"})
    assert with_version(own, UnitWrites(versions={"flash-002"})) == own
    assert with_version(plain, UnitWrites()) == plain  # nothing was read
    assert with_version(None, UnitWrites(versions={"flash-002"})) is None


def test_the_call_cache_keeps_the_version() -> None:
    judge = CachingJudge(Fixed(REPLY), MemoryKV(), ttl_s=60)
    judge.generate(JudgeRequest(prompt="p"))
    again = judge.generate(JudgeRequest(prompt="p"))
    assert again.cached and again.model_version == "flash-002"
