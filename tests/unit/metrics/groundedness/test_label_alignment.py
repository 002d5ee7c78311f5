"""Aligning a judge's labelled sentences to our split of the response."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evalq.metrics.groundedness.label_alignment import Aligner, word_list
from evalq.metrics.groundedness.sentences import has_words, split_sentences


def aligned(response: list[str], judged: list[str]) -> tuple[list[list[int]], list[bool]]:
    aligner = Aligner(response)
    targets = aligner.align(judged).targets
    return targets, [aligner.covered(i) for i in range(len(response))]


def test_words_ignore_case_quotes_punctuation_and_a_plural_s() -> None:
    assert word_list("“Bananas”  CURE cancer!") == word_list("banana cures cancer")


def test_exact_and_slightly_edited_copies_align() -> None:
    response = ["Apples are red.", "In 2020, the firm's revenue rose by 5%."]
    assert aligned(response, ["apples ARE red", "The firm’s revenue rose 5% in 2020."]) == (
        [[0], [1]],
        [True, True],
    )


def test_a_skipped_sentence_stays_uncovered() -> None:
    response = ["Apples are red.", "Bananas cure cancer."]
    assert aligned(response, ["Apples are red."]) == ([[0]], [True, False])
    # A judge sentence that is not in the response stands for nothing.
    assert aligned(response, ["Apples are red.", "Bananas are yellow."]) == (
        [[0], []],
        [True, False],
    )


def test_a_merged_judge_sentence_covers_both() -> None:
    response = ["Apples are red.", "Bananas are yellow.", "Thanks!"]
    assert aligned(response, ["Apples are red and bananas are yellow.", "Thanks"]) == (
        [[0, 1], [2]],
        [True, True, True],
    )


def test_clauses_cover_their_sentence_together_not_alone() -> None:
    response = ["Apples are red but bananas cure cancer."]
    assert aligned(response, ["Apples are red", "bananas cure cancer"]) == (
        [[0], [0]],
        [True],
    )
    # Labelling only the harmless part leaves the sentence unlabelled.
    assert aligned(["Apples are red fruits that cure cancer."], ["Apples are red fruits"]) == (
        [[0]],
        [False],
    )


def test_repeated_sentences_are_taken_in_order() -> None:
    response = ["Yes.", "Apples are red.", "Yes."]
    assert aligned(response, ["Yes.", "Apples are red.", "Yes."]) == (
        [[0], [1], [2]],
        [True, True, True],
    )


def test_only_limits_what_a_second_reply_labels() -> None:
    aligner = Aligner(["Apples are red.", "Bananas cure cancer."])
    aligner.align(["Apples are red."])
    again = aligner.align(["Apples are red.", "Bananas cure cancer."], only={1})
    assert again.targets == [[], [1]]
    assert aligner.covered(1)


# ---- properties over any text ---------------------------------------------------------------

_PIECES = 'Apples are red|e.g.|Dr.|3.5|Yes|no| |\n|\n\n|. |! |? |"|- |1. |## |…|—|U.S.|cure|x.org/a'
pieces = st.sampled_from(_PIECES.split("|"))
texts = st.one_of(st.text(max_size=200), st.lists(pieces, max_size=40).map("".join))
fuzz = settings(max_examples=300, deadline=None)


@fuzz
@given(texts)
def test_splitting_loses_and_repeats_no_word(text: str) -> None:
    sentences = split_sentences(text)
    assert all(s and s == s.strip() for s in sentences)
    assert [w for s in sentences for w in word_list(s)] == word_list(text)


@fuzz
@given(texts)
def test_a_judge_copying_our_sentences_covers_every_one_with_words(text: str) -> None:
    sentences = split_sentences(text)
    aligner = Aligner(sentences)
    targets = aligner.align(sentences).targets
    for i, sentence in enumerate(sentences):
        assert aligner.covered(i) == has_words(sentence), (i, sentences)
        assert targets[i] == ([i] if has_words(sentence) else []), (i, sentences, targets)
