"""The simulated groundedness judge's eligibility: an answer takes up the request itself or
through the passage it quotes."""

from __future__ import annotations

from evalq.fake_gemini.skills import groundedness as skill


def test_a_terse_answer_quoting_the_passage_about_the_request_is_eligible() -> None:
    context = "Paris is the capital of France. Berlin is the capital of Germany."
    reply = skill.judge_reply("What is the capital of France?", context, "Paris.")
    assert reply.eligible is True
    assert "france" in reply.eligibility_rationale  # (stems, as the skill compares words)
    unrelated = skill.judge_reply("What is the capital of France?", context, "Berlin.")
    assert unrelated.eligible is True  # it quotes a passage about capitals: wrong, yet on topic
    off_topic = skill.judge_reply("What is the capital of France?", context, "Cats sleep.")
    assert off_topic.eligible is False
