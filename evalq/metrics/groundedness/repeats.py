"""One judge's labelling asked more than once (`--samples K|auto`): each sentence of our own split
is a vote over its samples' labels (evalq.stats.adaptive's rule); one still split at the maximum
is undecided and scores by its share of sound samples, never as a sure supported or unsupported."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalq.core.judge import Judge
from evalq.core.models import Repeats, Sample, Verdict
from evalq.core.repeats import (
    SAMPLED_TEMPERATURE,
    ask_until_settled,
    budget_of,
    decision_dict,
    repeats_of,
    sample_verdicts,
)
from evalq.metrics.groundedness.judging import judge_response
from evalq.metrics.groundedness.labels import ResponseSentence
from evalq.metrics.groundedness.parsing import LABELS, NEEDS_ATTRIBUTION
from evalq.metrics.groundedness.scoring import JudgeResult
from evalq.metrics.groundedness.sentences import has_words, split_sentences
from evalq.stats.adaptive import Budget, Decision, vote_decision

SOUND = frozenset({"supported", "no_rad"})  # labels that leave a response grounded
ELIGIBILITY = "eligibility"


def samples_budget(options: Mapping[str, Any]) -> Budget | None:
    """The job's samples per labelling; None when each judge labels the response once."""
    budget = budget_of(options.get("samples"))
    return budget if budget.max_samples > 1 else None


def sample_labels(verdict: Verdict, count: int) -> list[str | None]:
    """The label that counts for each of the response's `count` sentences in one sample; None
    where that sample left it without one (a sentence it did not cover, a failed call)."""
    value = verdict.value
    out: list[str | None] = [None] * count
    if not isinstance(value, dict):
        return out
    for item in value.get("response_sentences") or []:
        index, label = item.get("index"), item.get("label")
        if isinstance(index, int) and 0 <= index < count and label in LABELS:
            out[index] = label
    return out


def sample_eligibility(verdict: Verdict) -> str | None:
    value = verdict.value
    eligible = value.get("eligible") if isinstance(value, dict) else None
    return None if eligible is None else "eligible" if eligible else "ineligible"


@dataclass(frozen=True)
class Votes:
    """Each sentence's labels across the samples, and the samples' eligibility verdicts."""

    sentences: list[str]
    labels: list[list[str | None]]  # per sentence, per sample
    eligibility: list[str | None]  # per sample

    @classmethod
    def of(cls, response: str, taken: Sequence[Verdict]) -> Votes:
        sentences = split_sentences(response)
        per_sample = [sample_labels(v, len(sentences)) for v in taken]
        labels = [[sample[i] for sample in per_sample] for i in range(len(sentences))]
        return cls(sentences, labels, [sample_eligibility(v) for v in taken])

    def voted(self) -> list[int]:
        """The sentences a vote is held on: every one that can make a claim."""
        return [i for i, text in enumerate(self.sentences) if has_words(text)]


def vote_decisions(votes: Votes, budget: Budget) -> dict[str, Decision]:
    """Each sentence's decision (by its index) and, when a sample gave one, the eligibility's."""
    out = {str(i): vote_decision(votes.labels[i], budget) for i in votes.voted()}
    if any(e is not None for e in votes.eligibility):
        out[ELIGIBILITY] = vote_decision(votes.eligibility, budget)
    return out


def unit_decision(decisions: Mapping[str, Decision], budget: Budget) -> Decision:
    """The labelling's stop: once every sentence (and the eligibility) stops. It is decided
    when all of them are, as sure as the least sure one."""
    parts = list(decisions.values())
    rule = parts[0].rule if parts else vote_decision([], budget).rule
    certainties = [d.certainty for d in parts if d.certainty is not None]
    return Decision(
        stop=all(d.stop for d in parts),
        verdict=None,
        decided=all(d.decided for d in parts),
        certainty=min(certainties) if certainties else None,
        interval=None,
        rule=rule,
    )


def sound_share(labels: Sequence[str | None]) -> float | None:
    """A sentence's share of samples (those that labelled it) calling it supported or no_rad."""
    given = [label for label in labels if label is not None]
    return sum(label in SOUND for label in given) / len(given) if given else None


def combine(
    judge_model: str, votes: Votes, decisions: Mapping[str, Decision], simulated: bool
) -> JudgeResult:
    """The labelling the samples settle on. A settled sentence counts as its label; an
    undecided one as a split vote: grounded is the smallest share of samples that found an
    undecided sentence sound (0 when a settled sentence fails), and the supported fraction
    counts an undecided sentence by its share of `supported` samples."""
    sentences: list[ResponseSentence] = []
    counts = {label: 0 for label in LABELS}
    undecided: list[int] = []
    supported_parts: list[float] = []
    for i, text in enumerate(votes.sentences):
        labels = [label for label in votes.labels[i] if label is not None]
        decision = decisions.get(str(i))
        sentence = ResponseSentence(
            index=i,
            sentence=text,
            status="no_words",
            judge_labels=labels,
        )
        if decision is not None and decision.decided and decision.verdict in LABELS:
            label = decision.verdict
            sentence.label, sentence.status = label, "labelled"
            sentence.rationale = f"{labels.count(label)} of {len(labels)} samples: {label}"
            counts[label] += 1
            if label in NEEDS_ATTRIBUTION:
                supported_parts.append(1.0 if label == "supported" else 0.0)
        elif decision is not None:
            sentence.status = "undecided" if labels else "missing"
            shares = ", ".join(f"{labels.count(x)} {x}" for x in LABELS if x in labels)
            sentence.rationale = f"undecided after {len(votes.labels[i])} samples ({shares})"
            if labels:
                undecided.append(i)
                claims = [x for x in labels if x in NEEDS_ATTRIBUTION]
                if claims:
                    supported_parts.append(claims.count("supported") / len(claims))
        sentences.append(sentence)
    eligibility = decisions.get(ELIGIBILITY)
    eligible_votes = [e for e in votes.eligibility if e is not None]
    eligible_share = (
        eligible_votes.count("eligible") / len(eligible_votes) if eligible_votes else 1.0
    )
    eligible: bool | None = None
    if eligibility is not None and eligibility.decided:
        eligible = eligibility.verdict == "eligible"
    missing = [s.index for s in sentences if s.status == "missing"]
    failing = counts["unsupported"] + counts["contradictory"]
    base = JudgeResult(
        judge_model=judge_model,
        status="ok",
        counts=counts,
        eligible=eligible,
        response_sentences=sentences,
        supported_fraction=sum(supported_parts) / len(supported_parts) if supported_parts else None,
        simulated=simulated,
    )
    if eligible is False:
        return base.model_copy(update={"grounded": 0, "why": "ineligible by the samples' vote"})
    if missing:
        detail = f"sentence(s) {', '.join(str(i + 1) for i in missing)} got no label in any sample"
        return base.model_copy(
            update={
                "status": "unscored",
                "supported_fraction": None,
                "missing": missing,
                "reason": "incomplete_labels",
                "detail": detail,
                "why": f"unscored (incomplete_labels): {detail}",
            }
        )
    sound = [s for s in sentences if s.label in NEEDS_ATTRIBUTION]
    grounded: float
    if failing:
        grounded, why = 0, f"{failing} sentence(s) settled unsupported or contradictory"
    elif not sound and not undecided:
        grounded, why = 0, "no sentence makes a claim from the context"
    else:
        sound_shares = [sound_share(votes.labels[i]) for i in undecided]
        grounded = min([1.0, *(x for x in sound_shares if x is not None)])
        why = f"all {len(sound)} settled sentence(s) needing support are supported"
        if undecided:
            shown = ", ".join(str(i + 1) for i in undecided)
            why += f"; sentence(s) {shown} undecided: a split vote ({grounded:.2f})"
    if eligibility is not None and not eligibility.decided:
        grounded *= eligible_share  # an undecided eligibility is a split vote too
        why += f"; eligibility undecided ({eligible_share:.2f} of samples eligible)"
    if grounded in (0, 1) and not undecided and (eligibility is None or eligibility.decided):
        grounded = int(grounded)
    return base.model_copy(update={"grounded": grounded, "why": why})


def repeated_labelling(
    judge: Judge,
    index: int,
    query: str,
    context: str,
    response: str,
    budget: Budget,
) -> Verdict:
    """One judge's labelling asked until every sentence's label is settled (or K times); the
    verdict's value is the combined labelling beside each sample and each sentence's
    decision."""

    def ask(sample: int) -> Verdict:
        return judge_response(
            judge,
            index,
            query,
            context,
            response,
            temperature=SAMPLED_TEMPERATURE,
            sample=sample,
        )[0]

    def decide(taken: list[Verdict]) -> Decision:
        return unit_decision(vote_decisions(Votes.of(response, taken), budget), budget)

    verdict = ask_until_settled(index, budget, ask, decide)
    taken = sample_verdicts(verdict) or []
    if verdict.status != "ok":
        return verdict.model_copy(update={"judge_model": judge.model})
    votes = Votes.of(response, taken)
    decisions = vote_decisions(votes, budget)
    result = combine(judge.model, votes, decisions, verdict.simulated)
    value = {
        **result.model_dump(mode="json"),
        **(verdict.value if isinstance(verdict.value, dict) else {}),
        "sentence_decisions": {k: decision_dict(d, len(taken)) for k, d in decisions.items()},
    }
    # An unscored labelling has no grounded figure; its reason and detail say why.
    grounded = result.grounded
    answer = None if grounded not in (0, 1) else "grounded" if grounded == 1 else "not grounded"
    return Verdict(
        index=index,
        status=result.status,
        answer=answer,
        value=value,
        judge_model=judge.model,
        result=int(grounded) if answer is not None and grounded is not None else None,
        reason=result.reason,
        detail=result.detail,
        simulated=verdict.simulated,
    )


def labelling_repeats(units: Sequence[tuple[str, Verdict | None]], response: str) -> list[Repeats]:
    """Each repeated sentence's samples and certainty, per judge, in the response's order."""
    out: list[Repeats] = []
    for judge_model, verdict in units:
        taken = sample_verdicts(verdict) if verdict is not None else None
        if verdict is None or taken is None:
            continue
        votes = Votes.of(response, taken)
        said = verdict.value.get("sentence_decisions") if isinstance(verdict.value, dict) else None
        said = said if isinstance(said, dict) else {}
        for i in votes.voted():
            drawn = [Sample(answer=label) for label in votes.labels[i]]
            name = f"s{i + 1}: {_clip(votes.sentences[i])}"
            out.append(repeats_of(name, judge_model, drawn, said.get(str(i)) or {}))
        if isinstance(said.get(ELIGIBILITY), dict):
            drawn = [Sample(answer=e) for e in votes.eligibility]
            out.append(repeats_of(ELIGIBILITY, judge_model, drawn, said[ELIGIBILITY]))
    return out


def _clip(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
