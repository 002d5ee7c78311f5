"""Our split of a response into sentences: where a reader cuts, and where they don't."""

from __future__ import annotations

import pytest

from evalq.metrics.groundedness.sentences import has_words, split_sentences


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("Apples are red. Bananas cure cancer.", ["Apples are red.", "Bananas cure cancer."]),
        ("Is it red? Yes! It is.", ["Is it red?", "Yes!", "It is."]),
        # abbreviations and initials don't end a sentence
        (
            "Dr. Smith met Mr. Jones. They spoke, e.g. about fruit, i.e. Apples. Then left.",
            [
                "Dr. Smith met Mr. Jones.",
                "They spoke, e.g. about fruit, i.e. Apples.",
                "Then left.",
            ],
        ),
        (
            "Brynjolfsson et al. (2003) estimated it. S. 4043 would require OPM.",
            ["Brynjolfsson et al. (2003) estimated it.", "S. 4043 would require OPM."],
        ),
        (
            "The U.S. Army grew. J. R. Smith said so.",
            ["The U.S. Army grew.", "J. R. Smith said so."],
        ),
        # decimals, addresses and numbered references
        (
            "Growth was 3.5 percent. See example.com for No. 5 in Fig. 3. It was approx. five.",
            [
                "Growth was 3.5 percent.",
                "See example.com for No. 5 in Fig. 3.",
                "It was approx. five.",
            ],
        ),
        # "no" is a word before a capital, an abbreviation only before a number
        ("The answer is no. The context says so.", ["The answer is no.", "The context says so."]),
        # closing quotes and brackets stay with their sentence
        (
            'He said "Stop." Then he left. (It was late.) Fine…  Done.',
            ['He said "Stop."', "Then he left.", "(It was late.)", "Fine…", "Done."],
        ),
        ('She asked "why?" and left.', ['She asked "why?" and left.']),
    ],
)
def test_sentences_are_cut_where_a_reader_cuts(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences


def test_lists_headings_urls_and_hard_wraps() -> None:
    text = (
        "Here are the points:\n"
        "1. Apples are red.\n"
        "2) Bananas are yellow\n"
        "- Pears grow\n"
        "  on trees.\n"
        "\n"
        "## Summary\n"
        "All of this comes\n"
        "from the context.\n"
        "https://example.com/a.b\n"
        "Thanks!"
    )
    assert split_sentences(text) == [
        "Here are the points:",
        "1. Apples are red.",
        "2) Bananas are yellow",
        "- Pears grow on trees.",
        "## Summary",
        "All of this comes from the context.",
        "https://example.com/a.b",
        "Thanks!",
    ]


def test_empty_and_wordless_pieces() -> None:
    assert split_sentences("") == []
    assert split_sentences("  \n\n ") == []
    assert split_sentences("Done. —") == ["Done.", "—"]
    assert not has_words("—") and not has_words("...") and not has_words("* *")
    assert has_words("No.") and has_words("42") and has_words("Ça va.")
