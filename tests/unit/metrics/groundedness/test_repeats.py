"""Groundedness' repeated labellings: each sentence a vote over its samples' labels, settled by
the vote rule; an undecided sentence scores as a split vote, never as a sure label."""

from __future__ import annotations

from evalq.core.models import Verdict
from evalq.core.repeats import decision_dict
from evalq.fake_gemini.skills.noisy import draw
from evalq.metrics.groundedness.repeats import (
    ELIGIBILITY,
    Votes,
    combine,
    labelling_repeats,
    unit_decision,
    vote_decisions,
)
from evalq.metrics.groundedness.view import groundedness_view
from evalq.stats.adaptive import Budget
from tests.support.metric_harness import Harness, MemoryJudge, simulated

RESPONSE = "Paris is the capital of France. The tower is 330 metres tall. I hope this helps."
AUTO = Budget(2, 8, adaptive=True)


def _labelled_sample(*labels: str | None, eligible: bool | None = True) -> Verdict:
    """A sample whose labels fall on the response's sentences in order (None: left out)."""
    sentences = [
        {"index": i, "sentence": "", "status": "labelled", "label": label}
        for i, label in enumerate(labels)
    ]
    value = {"response_sentences": sentences, "eligible": eligible}
    return Verdict(index=0, status="ok", value=value)


def _failed_sample() -> Verdict:
    return Verdict(index=0, status="unscored", reason="judge_error", detail="503")


def test_votes_align_each_sentence_and_a_missing_label_is_no_vote() -> None:
    taken = [
        _labelled_sample("supported", "supported", "no_rad"),
        _labelled_sample("supported", None, "no_rad"),
        _failed_sample(),
    ]
    votes = Votes.of(RESPONSE, taken)
    assert votes.sentences[1] == "The tower is 330 metres tall."
    assert votes.labels[0] == ["supported", "supported", None]
    assert votes.labels[1] == ["supported", None, None]
    assert votes.eligibility == ["eligible", "eligible", None]


def test_agreeing_samples_settle_every_sentence_and_stop() -> None:
    taken = [_labelled_sample("supported", "supported", "no_rad") for _ in range(3)]
    votes = Votes.of(RESPONSE, taken)
    decisions = vote_decisions(votes, AUTO)
    assert {d.verdict for k, d in decisions.items() if k != ELIGIBILITY} == {"supported", "no_rad"}
    assert unit_decision(decisions, AUTO).stop
    result = combine("judge", votes, decisions, simulated=True)
    assert (result.status, result.grounded, result.supported_fraction) == ("ok", 1, 1.0)
    assert [s.label for s in result.response_sentences] == ["supported", "supported", "no_rad"]


def test_one_split_sentence_keeps_the_labelling_asking() -> None:
    taken = [
        _labelled_sample("supported", "supported", "no_rad"),
        _labelled_sample("supported", "unsupported", "no_rad"),
        _labelled_sample("supported", "supported", "no_rad"),
    ]
    decisions = vote_decisions(Votes.of(RESPONSE, taken), AUTO)
    assert decisions["0"].stop and not decisions["1"].stop
    assert not unit_decision(decisions, AUTO).stop


def test_a_sentence_split_at_the_maximum_is_undecided_and_scores_by_its_share() -> None:
    labels = ["supported", "unsupported"] * 4  # eight samples, four each way
    taken = [_labelled_sample("supported", label, "no_rad") for label in labels]
    votes = Votes.of(RESPONSE, taken)
    decisions = vote_decisions(votes, AUTO)
    unit = unit_decision(decisions, AUTO)
    assert unit.stop and not unit.decided
    assert decisions["1"].verdict is None and not decisions["1"].decided
    result = combine("judge", votes, decisions, simulated=True)
    split = result.response_sentences[1]
    assert (split.label, split.status) == (None, "undecided")  # never a sure label
    assert result.grounded == 0.5  # a split vote: neither grounded nor not
    assert result.supported_fraction == 0.75  # one sure supported, one half
    assert result.counts["supported"] == 1 and result.counts["unsupported"] == 0


def test_a_settled_failing_sentence_makes_the_labelling_surely_not_grounded() -> None:
    taken = [_labelled_sample("unsupported", label, "no_rad") for label in ["supported"] * 8]
    votes = Votes.of(RESPONSE, taken)
    result = combine("judge", votes, vote_decisions(votes, AUTO), simulated=False)
    assert result.grounded == 0 and isinstance(result.grounded, int)


def test_a_fixed_count_asks_every_sample_and_fills_repeats() -> None:
    fixed = Budget(3, 3, adaptive=False)
    taken = [_labelled_sample("supported", "supported", "no_rad") for _ in range(3)]
    votes = Votes.of(RESPONSE, taken)
    decisions = vote_decisions(votes, fixed)
    value = {
        "samples": [v.model_dump(mode="json") for v in taken],
        "sentence_decisions": {k: decision_dict(d, 3) for k, d in decisions.items()},
    }
    unit = Verdict(index=0, status="ok", value=value)
    repeats = labelling_repeats([("judge", unit)], RESPONSE)
    assert [r.unit for r in repeats] == [
        "s1: Paris is the capital of France.",
        "s2: The tower is 330 metres tall.",
        "s3: I hope this helps.",
        ELIGIBILITY,
    ]
    assert all(len(r.samples) == 3 and r.rule == "fixed" for r in repeats)
    assert repeats[0].verdict == "supported" and repeats[0].decided


CONTEXT = "Paris is the capital of France. The Eiffel Tower in Paris is 330 metres tall."
TORN = "The Eiffel Tower in Paris is 330 metres tall"


def _evenly_torn_seed(count: int) -> int:
    """A seed whose `count` draws for TORN split exactly in half."""
    odds = {"supported": 0.5, "unsupported": 0.5}
    seed = 0
    while True:
        seed += 1
        drawn = [draw(odds, seed, f"{TORN}.", k) for k in range(count)]
        if drawn.count("supported") * 2 == count:
            return seed


def _grounded_harness(samples: int | str) -> Harness:
    return Harness("groundedness", {"samples": samples}, {"sim": MemoryJudge("sim", simulated)})


def test_a_row_with_a_sentence_split_at_k_scores_a_split_vote_never_a_sure_label() -> None:
    seed = _evenly_torn_seed(8)
    harness = _grounded_harness(8)
    (row,) = harness.rows(
        [
            {
                "query": "How tall is the Eiffel Tower in Paris?",
                "context": CONTEXT,
                "response": f"{TORN} [judge-odds supported=0.5 seed={seed}].",
            }
        ]
    )
    _, _, result = harness.run_row(row)
    assert len(harness.judges["sim"].requests) == 8  # one call per sample
    (torn, eligibility) = result.repeats
    assert (torn.verdict, torn.decided, torn.rule) == (None, False, "fixed")
    assert [s.answer for s in torn.samples].count("supported") == 4
    assert eligibility.unit == ELIGIBILITY and eligibility.decided
    assert result.score == 0.5  # neither grounded nor not
    (question,) = result.questions
    assert (question.result, question.answer) == (None, "split vote (0.50 grounded)")
    sentence = result.details["judges"]["sim"]["response_sentences"][0]
    assert (sentence["label"], sentence["status"]) == (None, "undecided")
    view = groundedness_view(result, [])
    assert view.headline == "split vote: grounded 0.50" and view.tone == "plain"
    assert result.details["samples"] == 8


def test_a_row_the_judge_labels_the_same_every_time_stops_at_three_labellings() -> None:
    harness = _grounded_harness("auto")
    (row,) = harness.rows(
        [
            {
                "query": "What is the capital of France?",
                "context": CONTEXT,
                "response": "Paris is the capital of France.",
            }
        ]
    )
    _, _, result = harness.run_row(row)
    assert len(harness.judges["sim"].requests) == 3
    assert {r.verdict for r in result.repeats} == {"supported", "eligible"}
    assert result.score == 1 and result.questions[0].result == 1
    requests = harness.judges["sim"].requests
    assert [r.sample for r in requests] == [0, 1, 2] and {r.temperature for r in requests} == {0.7}
