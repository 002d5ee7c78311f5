"""Asking one judge to label the response, and once more for the sentences it left out."""

from __future__ import annotations

from typing import Any

from evalq.core.errors import JudgeError, UnparseableReply, must_propagate
from evalq.core.judge import Judge, JudgeReply, JudgeRequest
from evalq.core.models import (
    Verdict,
)
from evalq.core.verdicts import unscored
from evalq.metrics.groundedness.excerpts import ContextIndex
from evalq.metrics.groundedness.labels import (
    Labelling,
)
from evalq.metrics.groundedness.parsing import (
    GroundingReply,
    ParsedGrounding,
    parse_grounding,
)
from evalq.metrics.groundedness.prompts import (
    judge_gap_prompt,
    judge_prompt,
)
from evalq.metrics.groundedness.scoring import check_sentences, score_labelling


def judge_response(
    judge: Judge,
    index: int,
    query: str,
    context: str,
    response: str,
    *,
    temperature: float = 0.0,
    sample: int = 0,
) -> tuple[Verdict, JudgeReply | None]:
    """One judge's labelling of the response, asked once more for any sentence it left out
    (a repeated sample asks both at its own temperature and sample index, so its own cache
    key). Rate limits and spent daily quotas propagate; any other failure, a reply we can't
    read, and a labelling that still leaves sentences out, is an unscored verdict."""
    sampling: dict[str, Any] = {"temperature": temperature, "sample": sample}
    prompt = judge_prompt(query, context, response)
    request = JudgeRequest(prompt=prompt, schema=GroundingReply, **sampling)
    try:
        reply = judge.generate(request)
    except JudgeError as exc:
        if must_propagate(exc):
            raise
        verdict = unscored(index, exc.reason, exc.message, exc.raw)
        return verdict.model_copy(update={"judge_model": judge.model}), None
    try:
        parsed = parse_grounding(reply.text)
    except UnparseableReply as exc:
        verdict = unscored(index, "parse_error", exc.message, exc.raw)
        update = {"judge_model": judge.model, "simulated": reply.simulated}
        return verdict.model_copy(update=update), reply
    context_index = ContextIndex(context)
    labelling = Labelling.of(response)
    labelling.add(check_sentences(parsed, context_index))
    simulated, failure = reply.simulated, None
    missing = labelling.missing() if parsed.eligible is not False else []
    if missing:
        labelling.asked_again = missing
        try:
            named = [labelling.sentences[i] for i in missing]
            more, second = _ask_again(judge, query, context, response, named, sampling)
        except JudgeError as exc:
            if must_propagate(exc):
                raise  # retried as a unit; the first call then comes from the cache
            failure = exc
        else:
            simulated = simulated or second.simulated
            labelling.add_asked_again(check_sentences(more, context_index), missing)
    result = score_labelling(
        judge.model, labelling, parsed.eligible, parsed.eligibility_reason, simulated
    )
    if result.status == "unscored":
        if failure is not None:  # the re-ask's own failure is the reason (truncated, blocked...)
            detail = f"{result.detail}; the re-ask failed: {failure.message}"
            result = result.model_copy(
                update={
                    "reason": failure.reason,
                    "detail": detail,
                    "why": f"unscored ({failure.reason}): {detail}",
                }
            )
        reason = result.reason or "incomplete_labels"
        verdict = unscored(index, reason, result.detail or "", reply.text[:2000])
        update = {"judge_model": judge.model, "simulated": simulated, "value": result.model_dump()}
        return verdict.model_copy(update=update), reply
    verdict = Verdict(
        index=index,
        status="ok",
        answer="grounded" if result.grounded else "not grounded",
        value=result.model_dump(),
        judge_model=judge.model,
        result=result.grounded,
        raw=reply.text[:2000],
        simulated=simulated,
    )
    return verdict, reply


def _ask_again(
    judge: Judge,
    query: str,
    context: str,
    response: str,
    missing: list[str],
    sampling: dict[str, Any],
) -> tuple[ParsedGrounding, JudgeReply]:
    """One more call naming the sentences the judge left out; raises JudgeError (a reply we
    can't read is UnparseableReply) when it brings nothing."""
    prompt = judge_gap_prompt(query, context, response, missing)
    reply = judge.generate(JudgeRequest(prompt=prompt, schema=GroundingReply, **sampling))
    return parse_grounding(reply.text), reply
