"""A reply's log probabilities as google-genai reads them (Candidate.logprobs_result and
avg_logprobs), turned into the domain's ReplyLogprobs so Gecko's --soft scoring never reads the
SDK's types."""

from __future__ import annotations

from google.genai import types

from evalq.core.judge import ReplyLogprobs, TokenChoice, TokenStep


def reply_logprobs(candidate: types.Candidate) -> ReplyLogprobs | None:
    """A candidate's logprobsResult as the domain's ReplyLogprobs: chosen token and top
    candidates per decoding step (paired by position; a step with no top list keeps only its
    chosen token), and avgLogprobs. None when the reply carries no chosen tokens: the request
    did not ask, or the model sent none (Gecko's --soft then leaves the question unscored)."""
    # On the wire: candidates[].avgLogprobs and candidates[].logprobsResult {topCandidates:
    # [{candidates: [{token, logProbability}]}], chosenCandidates: [...]}, one entry a step.
    result = candidate.logprobs_result
    if result is None or not result.chosen_candidates:
        return None
    chosen, tops = result.chosen_candidates, result.top_candidates or []

    def choice(item: types.LogprobsResultCandidate) -> TokenChoice:
        # A candidate without logProbability is not read as certain: NaN, which scoring skips.
        value = item.log_probability
        return TokenChoice(item.token or "", float("nan") if value is None else float(value))

    steps = []
    for i, picked in enumerate(chosen):
        top = (tops[i].candidates if i < len(tops) else None) or []
        steps.append(TokenStep(choice(picked), tuple(choice(c) for c in top)))
    avg = candidate.avg_logprobs
    return ReplyLogprobs(tuple(steps), None if avg is None else float(avg))
