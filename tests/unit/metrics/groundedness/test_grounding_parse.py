"""The groundedness reply parser: our JSON object, the seed's array in its real-world wrappings,
label drift; anything without readable labels is UnparseableReply (unscored, never 0)."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalq.core.errors import EvalqError, UnparseableReply
from evalq.metrics.groundedness.parsing import GroundingReply, normalise_label, parse_grounding

SEED_ITEMS = [
    {
        "sentence": "Apples are red.",
        "label": "supported",
        "rationale": "stated",
        "excerpt": "Apples are red fruits.",
    },
    {
        "sentence": "Bananas are green.",
        "label": "contradictory",
        "rationale": "yellow",
        "excerpt": "Bananas are yellow fruits.",
    },
    {
        "sentence": "Bananas are cheap.",
        "label": "unsupported",
        "rationale": "no price",
        "excerpt": None,
    },
    {"sentence": "Enjoy!", "label": "no_rad", "rationale": "greeting", "excerpt": None},
]
LABELS = ["supported", "contradictory", "unsupported", "no_rad"]


def test_structured_object_with_eligibility() -> None:
    reply = GroundingReply.model_validate(
        {"eligibility_rationale": "answers it", "eligible": True, "sentences": SEED_ITEMS}
    )
    parsed = parse_grounding(reply.model_dump_json())
    assert parsed.form == "object"
    assert (parsed.eligible, parsed.eligibility_reason) == (True, "answers it")
    assert [s.label for s in parsed.sentences] == LABELS
    assert parsed.sentences[0].excerpt == "Apples are red fruits."
    assert parsed.sentences[2].excerpt is None


@pytest.mark.parametrize(
    "reply",
    [
        json.dumps(SEED_ITEMS),
        "```json\n" + json.dumps(SEED_ITEMS, indent=2) + "\n```",
        "Here is my analysis of the response:\n```json\n" + json.dumps(SEED_ITEMS) + "\n```\nDone.",
        "Sure. " + json.dumps(SEED_ITEMS) + " That is all.",
        # The seed's own example output: one object per line inside brackets, no commas.
        "[\n" + "\n".join(json.dumps(item) for item in SEED_ITEMS) + "\n]",
        "\n".join(json.dumps(item) for item in SEED_ITEMS),
        "```json\n[\n" + "\n".join(json.dumps(item) for item in SEED_ITEMS) + "\n]\n```",
    ],
)
def test_seed_array_forms(reply: str) -> None:
    parsed = parse_grounding(reply)
    assert [s.label for s in parsed.sentences] == LABELS
    assert parsed.eligible is None  # the seed's form says nothing about eligibility
    assert parsed.sentences[1].excerpt == "Bananas are yellow fruits."


def test_label_and_field_drift() -> None:
    reply = json.dumps(
        {
            "Eligible": "yes",
            "Eligibility_Reason": "on topic",
            "Sentences": [
                {"Sentence": "A.", "Label": "Supported", "Reason": "r", "Excerpt": ["x", "y"]},
                {"sentence": "B.", "label": "**Partially supported**", "rationale": "half"},
                {"sentence": "C.", "label": "No RAD"},
                {"sentence": "D.", "label": "contradicted", "evidence": "z"},
            ],
        }
    )
    parsed = parse_grounding(reply)
    assert parsed.eligible is True
    assert parsed.eligibility_reason == "on topic"
    assert [s.label for s in parsed.sentences] == [
        "supported",
        "unsupported",  # partly backed is not supported
        "no_rad",
        "contradictory",
    ]
    assert parsed.sentences[0].excerpt == "x\ny"
    assert parsed.sentences[3].excerpt == "z"


def test_ineligible_reply_may_have_no_sentences() -> None:
    parsed = parse_grounding(
        '{"eligible": false, "eligibility_rationale": "evades", "sentences": []}'
    )
    assert (parsed.eligible, parsed.sentences) == (False, [])


def test_unknown_list_key_is_found() -> None:
    parsed = parse_grounding(json.dumps({"eligible": "no", "claims": SEED_ITEMS[:1]}))
    assert parsed.eligible is False
    assert [s.label for s in parsed.sentences] == ["supported"]


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("", "empty"),
        ("The response looks well grounded to me.", "no labelled sentences"),
        ('{"answer": "yes"}', "no labelled sentences"),
        ('{"eligible": true, "sentences": []}', "no labelled sentences"),
        ('[{"sentence": "A.", "label": "mostly fine"}]', "unknown label"),
        ('[{"sentence": "A."}]', "unknown label"),
        ('[{"label": "supported"}]', "has no text"),
        ('["A.", "B."]', "not a JSON object"),
        (
            '{"eligible": "perhaps", "sentences": [{"sentence": "A.", "label": "no_rad"}]}',
            "eligibility",
        ),
        ('```json\n[{"sentence": "A.", "label": "supp', "no labelled sentences"),
    ],
)
def test_unreadable_replies_raise(reply: str, why: str) -> None:
    with pytest.raises(UnparseableReply) as info:
        parse_grounding(reply)
    assert why in info.value.message


def test_normalise_label() -> None:
    assert normalise_label(" No-RAD ") == "no_rad"
    assert normalise_label("Not supported") == "unsupported"
    assert normalise_label("maybe") is None
    assert normalise_label(3) is None


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=300))
def test_parser_raises_only_evalq_errors(text: str) -> None:
    with contextlib.suppress(EvalqError):
        parse_grounding(text)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(["sentence", "label", "excerpt", "eligible", "sentences", "x"]),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(value=json_values)
def test_parser_on_json_shaped_replies(value: object) -> None:
    text = json.dumps(value)
    for reply in (text, f"```json\n{text}\n```", f"My labels: {text} end"):
        with contextlib.suppress(EvalqError):
            parse_grounding(reply)
