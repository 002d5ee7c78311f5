"""generateContent reply shapes as the real API sends them (docs/architecture/gemini-facts.md): every finish
and block reason google-genai knows, withheld and blocked bodies as recorded, usage per
modality and from a cache, thought summaries and signatures, read by the real client."""

from __future__ import annotations

import base64
import time
from typing import Any

import pytest
from google import genai
from google.genai import types

from evalq.fake_gemini.protocol import FakeMedia, FakeRequest
from evalq.fake_gemini.rest import THOUGHT_SUMMARY, VISUAL_PART_TOKENS
from evalq.fake_gemini.script import BLOCK_REASONS, FINISH_REASONS, TEXT_FINISH_REASONS, parse_rules
from tests.support.fake_calls import set_script
from tests.support.fake_http import http, serve_module

MODEL = "gemini-2.5-flash"
# One tiny PNG: the brain below never looks inside it, the usage counts it.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
)


class PlainBrain:
    def reply(self, request: FakeRequest) -> str:
        return f"plain answer to {len(request.user_text)} characters"


base_url = serve_module(PlainBrain())


def raw_generate(base_url: str, text: str, model: str = MODEL) -> dict[str, Any]:
    """The reply as the wire carries it."""
    payload = {"contents": [{"role": "user", "parts": [{"text": text}]}]}
    status, body = http(base_url, f"/v1beta/models/{model}:generateContent", payload)
    assert status == 200, body
    return dict(body)


def thinking(
    *, include: bool = False, level: str | None = None, budget: int | None = None
) -> types.GenerateContentConfig:
    config = types.ThinkingConfig(
        include_thoughts=include or None, thinking_level=level, thinking_budget=budget
    )
    return types.GenerateContentConfig(thinking_config=config)


# ---- finish and block reasons ----------------------------------------------------------------


def test_every_reason_google_genai_knows_is_accepted() -> None:
    assert {r.value for r in types.FinishReason} == FINISH_REASONS
    assert {r.value for r in types.BlockedReason} == BLOCK_REASONS
    for reason in FINISH_REASONS:
        assert parse_rules([{"match": "x", "finish_reason": reason}])[0].finish_reason == reason
    for reason in BLOCK_REASONS:
        assert parse_rules([{"match": "x", "block_reason": reason}])[0].block_reason == reason


@pytest.mark.parametrize("reason", sorted(FINISH_REASONS - TEXT_FINISH_REASONS))
def test_a_withheld_candidate_has_no_content_and_bills_the_prompt(
    genai_client: genai.Client, base_url: str, reason: str
) -> None:
    set_script(base_url, [{"match": "withhold", "finish_reason": reason}])
    response = genai_client.models.generate_content(model=MODEL, contents="withhold this")
    assert response.text is None
    assert response.candidates is not None
    candidate = response.candidates[0]
    assert candidate.finish_reason == types.FinishReason(reason)
    assert candidate.content is None
    # Harm ratings come with a harm-category stop only.
    assert (candidate.safety_ratings is not None) == (reason == "SAFETY")
    usage = response.usage_metadata
    assert usage is not None and usage.prompt_token_count
    assert usage.total_token_count == usage.prompt_token_count
    assert usage.candidates_token_count is None


@pytest.mark.parametrize("reason", sorted(BLOCK_REASONS))
def test_a_blocked_prompt_has_no_candidates_and_bills_the_prompt_as_recorded(
    genai_client: genai.Client, base_url: str, reason: str
) -> None:
    set_script(base_url, [{"match": "forbidden", "block_reason": reason}])
    response = genai_client.models.generate_content(model=MODEL, contents="forbidden prompt")
    assert response.candidates is None and response.text is None
    assert response.prompt_feedback is not None
    assert response.prompt_feedback.block_reason == types.BlockedReason(reason)
    usage = response.usage_metadata
    assert usage is not None and usage.prompt_token_count
    assert usage.total_token_count == usage.prompt_token_count
    body = raw_generate(base_url, "forbidden prompt")
    assert set(body) == {"promptFeedback", "usageMetadata", "modelVersion"}
    assert set(body["usageMetadata"]) == {"promptTokenCount", "totalTokenCount"}
    assert ("safetyRatings" in body["promptFeedback"]) == (reason == "SAFETY")


def test_model_armor_inside_a_batch_reaches_the_client(
    genai_client: genai.Client, base_url: str
) -> None:
    set_script(base_url, [{"match": "armored", "finish_reason": "MODEL_ARMOR"}])
    src = [{"contents": [{"parts": [{"text": t}], "role": "user"}]} for t in ("armored", "fine")]
    job = genai_client.batches.create(model=MODEL, src=src)
    assert job.name is not None
    deadline = time.monotonic() + 60  # only so a broken server fails instead of hanging
    while (
        job := genai_client.batches.get(name=job.name)
    ).state != types.JobState.JOB_STATE_SUCCEEDED:
        assert time.monotonic() < deadline and job.name is not None
        time.sleep(0.02)
    assert job.dest is not None and job.dest.inlined_responses is not None
    armored, fine = (r.response for r in job.dest.inlined_responses)
    assert armored is not None and armored.candidates is not None
    assert armored.candidates[0].finish_reason == types.FinishReason.MODEL_ARMOR
    assert armored.text is None
    assert fine is not None and fine.text is not None and fine.text.startswith("plain answer")


# ---- usage -----------------------------------------------------------------------------------


def test_usage_is_broken_down_by_modality(genai_client: genai.Client, base_url: str) -> None:
    text_only = genai_client.models.generate_content(model=MODEL, contents="words only")
    usage = text_only.usage_metadata
    assert usage is not None and usage.prompt_tokens_details is not None
    (text,) = usage.prompt_tokens_details
    assert text.modality == types.MediaModality.TEXT
    assert text.token_count == usage.prompt_token_count

    image = types.Part.from_bytes(data=PNG, mime_type="image/png")
    with_image = genai_client.models.generate_content(model=MODEL, contents=[image, "and words"])
    usage = with_image.usage_metadata
    assert usage is not None and usage.prompt_tokens_details is not None
    by_modality = {d.modality: d.token_count for d in usage.prompt_tokens_details}
    assert by_modality[types.MediaModality.IMAGE] == VISUAL_PART_TOKENS
    assert sum(d.token_count or 0 for d in usage.prompt_tokens_details) == (
        usage.prompt_token_count
    )
    # Media first, as recorded bodies list them.
    assert usage.prompt_tokens_details[0].modality == types.MediaModality.IMAGE


def test_a_rule_reports_cached_prompt_tokens_within_the_prompt(
    genai_client: genai.Client, base_url: str
) -> None:
    set_script(
        base_url,
        [
            {"match": "cached", "reply": "from cache", "cached_tokens": 3},
            {"match": "huge", "cached_tokens": 10**6},
        ],
    )
    usage = genai_client.models.generate_content(
        model=MODEL, contents="cached " * 20
    ).usage_metadata
    assert usage is not None and usage.cached_content_token_count == 3
    assert usage.cache_tokens_details is not None
    assert usage.cache_tokens_details[0].token_count == 3
    capped = genai_client.models.generate_content(
        model=MODEL, contents="huge prompt"
    ).usage_metadata
    assert capped is not None and capped.prompt_token_count is not None
    assert capped.cached_content_token_count == capped.prompt_token_count
    plain = genai_client.models.generate_content(
        model=MODEL, contents="no cache here"
    ).usage_metadata
    assert plain is not None and plain.cached_content_token_count is None


@pytest.mark.parametrize(
    "rule",
    [
        {"match": "a", "cached_tokens": -1},
        {"match": "a", "cached_tokens": 1.5},
        {"match": "a", "status": 503, "cached_tokens": 1},
        {"match": "a", "block_reason": "SAFETY", "cached_tokens": 1},
    ],
)
def test_bad_cached_token_rules_are_refused(base_url: str, rule: dict[str, Any]) -> None:
    status, body = http(base_url, "/script", [rule])
    assert status == 400 and "cached_tokens" in body["error"]["message"]


# ---- thoughts --------------------------------------------------------------------------------


def test_a_thought_summary_is_its_own_part_before_the_answer(
    genai_client: genai.Client, base_url: str
) -> None:
    response = genai_client.models.generate_content(
        model=MODEL, contents="think aloud", config=thinking(include=True)
    )
    assert response.candidates is not None and response.candidates[0].content is not None
    thought, answer = response.candidates[0].content.parts or []
    assert thought.thought is True and thought.text == THOUGHT_SUMMARY
    assert answer.thought is None and answer.text == response.text
    assert response.text is not None and response.text.startswith("plain answer")
    assert answer.thought_signature is None  # 2.5 models sign no plain text reply
    usage = response.usage_metadata
    assert usage is not None and usage.thoughts_token_count


def test_no_thought_part_unless_asked_or_when_nothing_was_thought(
    genai_client: genai.Client,
) -> None:
    unasked = genai_client.models.generate_content(model=MODEL, contents="quietly")
    assert unasked.candidates is not None and unasked.candidates[0].content is not None
    assert [p.thought for p in unasked.candidates[0].content.parts or []] == [None]
    off = genai_client.models.generate_content(
        model=MODEL, contents="no thinking", config=thinking(include=True, budget=0)
    )
    assert off.candidates is not None and off.candidates[0].content is not None
    assert [p.thought for p in off.candidates[0].content.parts or []] == [None]


def test_gemini_3_signs_its_thinking_on_the_last_answer_part(
    genai_client: genai.Client, base_url: str
) -> None:
    model = "gemini-3-flash-preview"
    signed = genai_client.models.generate_content(
        model=model, contents="sign it", config=thinking(include=True, level="high")
    )
    assert signed.candidates is not None and signed.candidates[0].content is not None
    thought, answer = signed.candidates[0].content.parts or []
    assert thought.thought is True and thought.thought_signature is None
    assert isinstance(answer.thought_signature, bytes) and answer.thought_signature
    assert signed.text is not None and signed.text.startswith("plain answer")
    unsigned = genai_client.models.generate_content(
        model=model, contents="sign it", config=thinking(level="minimal")
    )
    assert unsigned.candidates is not None and unsigned.candidates[0].content is not None
    (only,) = unsigned.candidates[0].content.parts or []
    assert only.thought_signature is None  # nothing was thought, nothing to sign


def test_thinking_that_eats_the_output_leaves_only_the_thought_summary(
    genai_client: genai.Client,
) -> None:
    config = thinking(include=True, budget=1024)
    config.max_output_tokens = 64
    response = genai_client.models.generate_content(
        model=MODEL, contents="long think", config=config
    )
    assert response.candidates is not None and response.candidates[0].content is not None
    assert response.candidates[0].finish_reason == types.FinishReason.MAX_TOKENS
    (thought,) = response.candidates[0].content.parts or []
    assert thought.thought is True
    assert not response.text


def test_include_thoughts_must_be_a_boolean(base_url: str) -> None:
    payload = {
        "contents": [{"parts": [{"text": "x"}]}],
        "generationConfig": {"thinkingConfig": {"includeThoughts": "yes"}},
    }
    status, body = http(base_url, f"/v1beta/models/{MODEL}:generateContent", payload)
    assert status == 400 and "includeThoughts" in body["error"]["message"]


def test_prompt_details_count_what_the_prompt_bills() -> None:
    from evalq.fake_gemini.rest import prompt_details, prompt_tokens

    request = FakeRequest(
        model=MODEL,
        text="x" * 40,
        media=[FakeMedia("image/png", PNG), FakeMedia("video/mp4", b"v")],
    )
    assert prompt_details(request) == [
        {"modality": "IMAGE", "tokenCount": VISUAL_PART_TOKENS},
        {"modality": "VIDEO", "tokenCount": VISUAL_PART_TOKENS},
        {"modality": "TEXT", "tokenCount": 10},
    ]
    assert prompt_tokens(request) == 2 * VISUAL_PART_TOKENS + 10
