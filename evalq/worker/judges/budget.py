"""The gate before every judge call that would reach the API: a cancelled or paused job starts
no new call, and under a spend cap (--max-cost-usd) each call reserves its estimated cost
first, so the cap holds with hundreds of calls in flight (docs/concepts/cost.md)."""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Mapping

from evalq.core.errors import BudgetSpent, CallCost, CapBusy, JobHalted
from evalq.core.judge import Judge, JudgeReply, JudgeRequest
from evalq.core.media.tokens import media_tokens
from evalq.core.pricing import Price, call_cost_nanos, price_for, usd
from evalq.worker.judges.layer import JudgeLayer
from evalq.worker.store import Store

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4  # as the rate limiter's estimate and the dry run's fallback
CAP_BUSY_RETRY_S = 2.0  # about a call's time: the reservations ahead have settled by then


def cap_reason(
    spent_nanos: int, cap_nanos: int, reserved_nanos: int = 0, next_nanos: int = 0
) -> str:
    committed = ""
    if reserved_nanos or next_nanos:
        committed = (
            f" (+ ${usd(reserved_nanos):.4f} reserved by calls in flight and"
            f" ${usd(next_nanos):.4f} estimated for the next call)"
        )
    return (
        f"cost cap reached: ${usd(spent_nanos):.4f} spent{committed} of the "
        f"${usd(cap_nanos):.4f} allowed (--max-cost-usd); "
        "`evalq resume JOB --max-cost-usd Y` continues with a new cap"
    )


def pause_if_spent(store: Store, job_id: str, spent_nanos: int, cap_nanos: int | None) -> bool:
    """Pause the job once its spend reaches its cap; True when the cap is reached."""
    if cap_nanos is None or spent_nanos < cap_nanos:
        return False
    reason = cap_reason(spent_nanos, cap_nanos)
    if store.pause(job_id, reason, at_cap_nanos=cap_nanos):
        log.warning("job %s paused: %s", job_id, reason)
    return True


def estimated_prompt_tokens(request: JudgeRequest) -> int:
    """The request's prompt before it is sent: its text at CHARS_PER_TOKEN and its media by
    Google's published rules (evalq.core.media.tokens, as the dry run counts them)."""
    text = len(request.prompt) + len(request.system_instruction or "")
    media = sum(media_tokens(part, _text_tokens)[0] for part in request.media)
    return _text_tokens_of(text) + media


def _text_tokens_of(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)


def _text_tokens(text: str) -> int:
    return _text_tokens_of(len(text))


def estimated_cost_nanos(
    request: JudgeRequest, price: Price | None, output_tokens: int, *, batch: bool = False
) -> int:
    """The most the call should cost: its estimated prompt and every output token it may bill.
    `output_tokens`: the allowance when the request has none; a request's max_output_tokens
    already holds its thinking's room (evalq.core.thinking.apply), and thoughts are billed as
    output, so it bounds what the reply bills."""
    if price is None:
        return 0
    allowance = request.max_output_tokens or output_tokens
    return call_cost_nanos(price, estimated_prompt_tokens(request), allowance, batch=batch)


class BudgetGuard(JudgeLayer):
    """Admits a call (status, and the cap's reservation) just before it goes to the API; the
    reservation made is appended to `held`, which whoever counts the call's cost settles.

    One round trip a call (Store.admit_call, reserve_call.lua), atomic across workers. A call
    whose estimate does not fit beside the calls in flight waits for them to settle (CapBusy, a
    countdown); one that does not fit with nothing reserved goes alone, the job's last, which
    may pass the cap by what it really costs. It sits before the limiter's wait and the
    client's transient retries: a cancel can not stop those, nor calls already sent."""

    def __init__(
        self,
        inner: Judge,
        store: Store,
        job_id: str,
        *,
        prices: Mapping[str, Price],
        output_tokens: int,
        hold_s: float,
        held: list[str],
        batch: bool = False,
    ) -> None:
        super().__init__(inner, store, job_id)
        self._price = price_for(inner.model, prices)
        self._output_tokens = output_tokens
        self._hold_s = hold_s
        self._held = held
        self._batch = batch

    def generate(self, request: JudgeRequest) -> JudgeReply:
        estimate = estimated_cost_nanos(
            request, self._price, self._output_tokens, batch=self._batch
        )
        member = f"{uuid.uuid4().hex}:{estimate}"
        seen = self._store.admit_call(self._job_id, member, estimate, self._hold_s)
        if seen.verdict == "idle":  # the unit is left unanswered, for resume or for good
            raise JobHalted(f"job {seen.status}: no new call is made", cost=CallCost(attempts=0))
        if seen.verdict == "over" and seen.cap_nanos is not None:
            reason = cap_reason(seen.spent_nanos, seen.cap_nanos, seen.reserved_nanos, estimate)
            if self._store.pause(self._job_id, reason, at_cap_nanos=seen.cap_nanos):
                log.warning("job %s paused: %s", self._job_id, reason)
            raise BudgetSpent(reason, cost=CallCost(attempts=0))  # no request made
        if seen.verdict == "busy":
            raise CapBusy(
                f"cost cap: ${usd(seen.reserved_nanos):.4f} reserved by calls in flight leaves "
                "no room for this call's estimate yet; asked again once they settle",
                CAP_BUSY_RETRY_S,
                cost=CallCost(attempts=0),
            )
        if seen.verdict == "reserved":
            self._held.append(member)
        return self._inner.generate(request)


def settle(store: Store, job_id: str, held: list[str]) -> None:
    """Release the reservations in `held` once their calls' cost is counted, and forget them
    (a call appended meanwhile by another thread stays for its own settling). A failed call is
    released the same way, after whatever it billed, so spend + reserved never forgets a call;
    one a killed worker never settled expires after EVALQ_TASK_TIME_LIMIT_S."""
    members = held[:]
    del held[: len(members)]
    store.release_calls(job_id, members)
