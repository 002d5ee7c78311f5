"""The simulated judge's groundedness labels made noisy on purpose: a sentence carrying odds is
labelled by a draw with the sample's seed, odds in the context apply to every sentence, and a
drawn `supported` quotes the context so the excerpt check keeps it."""

from __future__ import annotations

from collections import Counter

from evalq.fake_gemini.skills.groundedness import judge_reply

NOISY_CONTEXT = "Paris is the capital of France. The Eiffel Tower in Paris is 330 metres tall."
NOISY_QUERY = "How tall is the Eiffel Tower in Paris?"
ODDS_SENTENCE = "The Eiffel Tower in Paris is 330 metres tall [judge-odds supported=0.7 seed=4]."


def test_a_sentence_with_odds_draws_its_label_per_sample_and_quotes_the_context() -> None:
    drawn: Counter[str] = Counter()
    for sample in range(400):
        reply = judge_reply(NOISY_QUERY, NOISY_CONTEXT, ODDS_SENTENCE, sample=sample)
        (sentence,) = reply.sentences
        drawn[sentence.label] += 1
        if sentence.label == "supported":
            assert sentence.excerpt is not None and sentence.excerpt in NOISY_CONTEXT
        assert sentence.sentence == ODDS_SENTENCE  # quoted as written
    assert set(drawn) == {"supported", "unsupported"}
    assert 0.6 < drawn["supported"] / 400 < 0.8
    again = judge_reply(NOISY_QUERY, NOISY_CONTEXT, ODDS_SENTENCE, sample=7)
    assert again == judge_reply(NOISY_QUERY, NOISY_CONTEXT, ODDS_SENTENCE, sample=7)


def test_without_a_sample_seed_the_likeliest_label_is_given() -> None:
    reply = judge_reply(NOISY_QUERY, NOISY_CONTEXT, ODDS_SENTENCE)
    assert [s.label for s in reply.sentences] == ["supported"]
    assert reply.eligible


def test_odds_in_the_context_apply_to_every_sentence_and_others_stay_deterministic() -> None:
    response = "Paris is the capital of France. The Eiffel Tower in Paris is 330 metres tall."
    plain = [s.label for s in judge_reply(NOISY_QUERY, NOISY_CONTEXT, response, sample=1).sentences]
    assert plain == ["supported", "supported"]
    context = f"{NOISY_CONTEXT} [judge-odds supported=0 seed=1]"
    noisy = judge_reply(NOISY_QUERY, context, response, sample=1)
    assert [s.label for s in noisy.sentences] == ["unsupported", "unsupported"]
