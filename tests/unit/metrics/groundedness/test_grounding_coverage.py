"""Groundedness labels must cover the response: the re-ask for left-out sentences, what is
merged from it, the worse of two labels, and the simulated judge's part in it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalq.core.dataset import load_dataset
from evalq.core.errors import Blocked, RateLimited, TruncatedReply
from evalq.core.models import RowInput, Verdict
from evalq.examples.grounding import write_groundedness_example
from evalq.fake_gemini.brain import SimulatedJudge
from evalq.fake_gemini.protocol import FakeRequest
from evalq.fake_gemini.skills import groundedness as skill
from evalq.metrics.groundedness import metric as g
from evalq.metrics.groundedness import prompts as gp
from evalq.metrics.groundedness.labels import worse_label
from evalq.metrics.groundedness.parsing import GroundingReply
from evalq.metrics.groundedness.prompts import JUDGE_TEMPLATE_VERSION
from tests.support.grounding import CONTEXT, QUERY, labels
from tests.support.judges import ListJudge, Reply
from tests.support.prompts import extract_section

RESPONSE = "Apples are red. Bananas cure cancer."


APPLES = ("Apples are red.", "supported", "Apples are red fruits.")
ONLY_APPLES = labels(APPLES)


def judged_with(replies: list[Reply], response: str = RESPONSE) -> tuple[Verdict, ListJudge]:
    judge = ListJudge(replies)
    verdict, _ = g.judge_response(judge, 0, QUERY, CONTEXT, response)
    return verdict, judge


def result_of(verdict: Verdict) -> g.JudgeResult:
    assert isinstance(verdict.value, dict)
    return g.JudgeResult.model_validate(verdict.value)


def test_a_judge_that_skips_a_sentence_is_never_grounded() -> None:
    """A judge that labels only "Apples are red." of two sentences, even when asked again,
    leaves the row unscored (incomplete_labels), never grounded 1."""
    verdict, used = judged_with([ONLY_APPLES, ONLY_APPLES])
    assert (verdict.status, verdict.result, verdict.reason) == (
        "unscored",
        None,
        "incomplete_labels",
    )
    assert "Bananas cure cancer." in (verdict.detail or "")
    assert "even when asked again" in (verdict.detail or "")
    result = result_of(verdict)
    assert (result.status, result.reason, result.grounded) == (
        "unscored",
        "incomplete_labels",
        None,
    )
    assert (result.missing, result.asked_again) == ([1], [1])
    assert [(s.sentence, s.label, s.status) for s in result.response_sentences] == [
        ("Apples are red.", "supported", "labelled"),
        ("Bananas cure cancer.", None, "missing"),
    ]
    # One re-ask, naming the missing sentence inside an untrusted block.
    first, second = used.requests
    assert extract_section(first.prompt, "unlabelled_sentences") is None
    assert extract_section(second.prompt, "unlabelled_sentences") == "Bananas cure cancer."
    assert extract_section(second.prompt, "response") == RESPONSE
    assert second.schema is GroundingReply


def test_a_complete_labelling_is_not_asked_again() -> None:
    verdict, used = judged_with([labels(APPLES, ("Bananas cure cancer.", "unsupported", None))])
    assert (verdict.status, verdict.result) == ("ok", 0)
    assert len(used.requests) == 1
    result = result_of(verdict)
    assert (result.missing, result.asked_again, result.conflicting_labels) == ([], [], [])


def test_the_re_ask_fills_in_only_the_missing_sentences() -> None:
    again = labels(
        ("Apples are red.", "contradictory", "Bananas are yellow fruits."),  # not asked: ignored
        ("bananas cure  cancer", "unsupported", None),
    )
    verdict, used = judged_with([ONLY_APPLES, again])
    assert (verdict.status, verdict.result) == ("ok", 0)
    assert len(used.requests) == 2
    result = result_of(verdict)
    assert [(s.label, s.status) for s in result.response_sentences] == [
        ("supported", "labelled"),
        ("unsupported", "labelled_when_asked_again"),
    ]
    assert result.counts == {"supported": 1, "unsupported": 1, "contradictory": 0, "no_rad": 0}
    assert (result.missing, result.asked_again, result.conflicting_labels) == ([], [1], [])
    assert [(s.asked_again, s.aligned_to) for s in result.sentences] == [
        (False, [0]),
        (True, []),
        (True, [1]),
    ]
    assert "matches no missing sentence" in (result.sentences[1].note or "")


def test_a_re_ask_that_covers_everything_can_ground_the_response() -> None:
    response = "Apples are red. Bananas are yellow."
    again = labels(("Bananas are yellow.", "supported", "Bananas are yellow fruits."))
    verdict, _ = judged_with([ONLY_APPLES, again], response)
    assert (verdict.status, verdict.result) == ("ok", 1)


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        (("supported", "unsupported"), "unsupported"),
        (("unsupported", "contradictory"), "contradictory"),
        (("supported", "contradictory"), "contradictory"),
        (("no_rad", "supported"), "supported"),
        (("unsupported", "no_rad"), "unsupported"),
    ],
)
def test_a_sentence_labelled_twice_takes_the_worse_label(given: tuple[str, str], kept: str) -> None:
    excerpt = {"supported": "Apples are red fruits.", "contradictory": "Apples are red fruits."}
    verdict, _ = judged_with(
        [labels(*((APPLES[0], label, excerpt.get(label)) for label in given))], "Apples are red."
    )
    result = result_of(verdict)
    assert [s.label for s in result.response_sentences] == [kept]
    assert [c.model_dump() for c in result.conflicting_labels] == [
        {"index": 0, "sentence": "Apples are red.", "labels": list(given), "kept": kept}
    ]
    assert "differing labels, the worse counts" in result.why
    assert worse_label(list(given)) == kept  # type: ignore[arg-type]


def test_clauses_labelled_apart_count_as_one_sentence_with_the_worse_label() -> None:
    verdict, _ = judged_with(
        [labels(("Apples are red", *APPLES[1:]), ("but bananas cure cancer", "unsupported", None))],
        "Apples are red but bananas cure cancer.",
    )
    result = result_of(verdict)
    assert (verdict.result, [s.label for s in result.response_sentences]) == (0, ["unsupported"])
    assert result.conflicting_labels[0].labels == ["supported", "unsupported"]


def test_a_failed_re_ask_is_unscored_with_its_own_reason_and_rate_limits_propagate() -> None:
    verdict, _ = judged_with([ONLY_APPLES, Blocked("withheld")])
    assert (verdict.status, verdict.result, verdict.reason) == ("unscored", None, "blocked")
    assert "Bananas cure cancer." in (verdict.detail or "")
    assert "the re-ask failed: withheld" in (verdict.detail or "")
    assert result_of(verdict).missing == [1]
    cut, _ = judged_with([ONLY_APPLES, TruncatedReply("stopped at MAX_TOKENS")])
    assert (cut.status, cut.reason) == ("unscored", "truncated")
    unreadable, _ = judged_with([ONLY_APPLES, "no idea"])
    assert (unreadable.status, unreadable.reason) == ("unscored", "parse_error")
    with pytest.raises(RateLimited):
        judged_with([ONLY_APPLES, RateLimited("slow down", retry_after_s=2)])


def test_sentences_without_words_and_ineligible_responses_need_no_label() -> None:
    verdict, used = judged_with([ONLY_APPLES], "Apples are red. —")
    assert (verdict.status, verdict.result, len(used.requests)) == ("ok", 1, 1)
    assert [s.status for s in result_of(verdict).response_sentences] == ["labelled", "no_words"]
    ineligible, used = judged_with([labels(eligible=False)])
    assert (ineligible.status, ineligible.result, len(used.requests)) == ("ok", 0, 1)


def test_a_judge_sentence_not_in_the_response_counts_for_nothing() -> None:
    invented = labels(APPLES, ("Cherries are blue.", "unsupported", None))
    verdict, _ = judged_with([invented], "Apples are red.")
    result = result_of(verdict)
    assert (verdict.result, result.counts["unsupported"]) == (1, 0)
    assert "matches no sentence of the response" in (result.sentences[1].note or "")


def test_an_unscored_labelling_shows_in_the_row() -> None:
    row = RowInput(
        id="r",
        line=1,
        prompt=QUERY,
        data={"query": QUERY, "context": CONTEXT, "response": RESPONSE},
    )
    plan = g.GroundednessPlan(
        units=[g.JudgeUnit(index=0, judge_model="test-judge")],
        judges=["test-judge"],
        judge_template=JUDGE_TEMPLATE_VERSION,
        response=RESPONSE,
        response_source="dataset",
    )
    verdict, _ = judged_with([ONLY_APPLES, ONLY_APPLES])
    result = g.GROUNDEDNESS.aggregate(row, plan, {0: verdict})
    assert (result.status, result.score, result.reason) == ("failed", None, "incomplete_labels")
    assert [q.reason for q in result.questions] == ["incomplete_labels"]
    shown = result.details["judges"]["test-judge"]
    assert shown["missing"] == [1]
    assert shown["response_sentences"][1]["status"] == "missing"
    summary = g.GROUNDEDNESS.summarize([result])
    assert summary["per_judge"]["test-judge"]["rows_unscored"] == 1
    assert summary["labels_asked_again"] == 1


# ---- the simulated judge ------------------------------------------------------------------------


def skill_reply(prompt: str) -> str:
    schema = GroundingReply.model_json_schema()
    return SimulatedJudge().reply(FakeRequest(model="m", text=prompt, response_schema=schema))


def test_the_simulated_judge_answers_a_re_ask_for_just_the_missing_sentences() -> None:
    prompt = gp.judge_gap_prompt(QUERY, CONTEXT, RESPONSE, ["Bananas cure cancer."])
    reply = GroundingReply.model_validate_json(skill_reply(prompt))
    assert [(s.sentence, s.label) for s in reply.sentences] == [
        ("Bananas cure cancer.", "unsupported")
    ]
    verdict, _ = judged_with([ONLY_APPLES, skill_reply(prompt)])
    assert (verdict.status, verdict.result) == ("ok", 0)


def test_the_simulated_judge_labels_every_example_sentence_at_once(tmp_path: Path) -> None:
    """So the demo's headline results come without a single re-ask."""
    loaded = load_dataset(write_groundedness_example(tmp_path), "groundedness")
    for r in loaded.rows:
        data: dict[str, Any] = r.data
        response = data.get("response") or skill.write_answer(data["query"], data["context"])
        reply = skill_reply(gp.judge_prompt(data["query"], data["context"], response))
        used = ListJudge([reply])
        verdict, _ = g.judge_response(used, 0, data["query"], data["context"], response)
        assert len(used.requests) == 1, (r.id, verdict.value)
        result = result_of(verdict)
        assert result.missing == [] and result.conflicting_labels == [], r.id
        assert all(s.status == "labelled" for s in result.response_sentences), r.id
