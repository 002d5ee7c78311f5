"""The one reading of a generateContent body (evalq.worker.judges.gemini.reply_from_response), on
bodies of the shapes the real API sends, parsed by google-genai's own reader: which outcome each is,
and that every one of them carries the tokens its usageMetadata bills (blocked, empty and cut-off
replies are paid for too). The replay corpus (tests/integration/vertex/test_replay_corpus.py) runs
recorded bodies through a worker; these pin the rules one by one, with their reasons."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types

from evalq.core.errors import Blocked, JudgeError, TruncatedReply, UnparseableReply
from evalq.core.judge import ensure_complete
from evalq.fake_gemini.script import BLOCK_REASONS
from evalq.worker.judges.reply_reading import BLOCKING_FINISH_REASONS, reply_from_response

USAGE = {
    "promptTokenCount": 1200,
    "candidatesTokenCount": 40,
    "thoughtsTokenCount": 300,
    "cachedContentTokenCount": 1000,
    "totalTokenCount": 1540,
    "promptTokensDetails": [
        {"modality": "TEXT", "tokenCount": 942},
        {"modality": "IMAGE", "tokenCount": 258},
    ],
}


def read(body: dict[str, Any]) -> Any:
    response = types.GenerateContentResponse._from_response(response=body, kwargs={})
    return ensure_complete(reply_from_response("gemini-2.5-flash", response))


def failure(body: dict[str, Any]) -> JudgeError:
    with pytest.raises(JudgeError) as caught:
        read(body)
    return caught.value


def billed(error: JudgeError) -> tuple[int, int, int, int]:
    spent = error.cost
    return (spent.prompt_tokens, spent.output_tokens, spent.thought_tokens, spent.cached_tokens)


def candidate(finish: str | None, *parts: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)} if parts else {}}
    if finish is not None:
        found["finishReason"] = finish
    return found


def test_a_normal_stop_is_read_with_every_token_count() -> None:
    reply = read({"candidates": [candidate("STOP", {"text": "yes"})], "usageMetadata": USAGE})
    assert (reply.text, reply.prompt_tokens, reply.output_tokens) == ("yes", 1200, 40)
    assert (reply.thought_tokens, reply.cached_tokens) == (300, 1000)


def test_thought_parts_are_never_the_answer() -> None:
    thought = {"text": "Maybe no.", "thought": True, "thoughtSignature": "c2lnbmF0dXJl"}
    reply = read(
        {"candidates": [candidate("STOP", thought, {"text": "yes"})], "usageMetadata": USAGE}
    )
    assert reply.text == "yes"


def test_only_thoughts_after_a_stop_is_truncated_with_its_tokens() -> None:
    thought = {"text": "Let me think.", "thought": True}
    error = failure({"candidates": [candidate("STOP", thought)], "usageMetadata": USAGE})
    assert isinstance(error, TruncatedReply)
    assert billed(error) == (1200, 40, 300, 1000)


def test_of_several_candidates_the_first_is_read() -> None:
    body = {
        "candidates": [candidate("STOP", {"text": "no"}), candidate("STOP", {"text": "yes"})],
        "usageMetadata": USAGE,
    }
    assert read(body).text == "no"


@pytest.mark.parametrize("reason", sorted(BLOCK_REASONS - {"BLOCKED_REASON_UNSPECIFIED"}))
def test_a_blocked_prompt_is_blocked_and_billed(reason: str) -> None:
    body = {
        "promptFeedback": {"blockReason": reason},
        "usageMetadata": {"promptTokenCount": 12559, "totalTokenCount": 12559},
    }
    error = failure(body)
    assert isinstance(error, Blocked) and reason in error.message
    assert billed(error) == (12559, 0, 0, 0)


@pytest.mark.parametrize("reason", sorted(BLOCKING_FINISH_REASONS - {"JAILBREAK"}))
def test_a_safety_or_policy_finish_reason_is_blocked_not_truncated(reason: str) -> None:
    error = failure({"candidates": [candidate(reason)], "usageMetadata": USAGE})
    assert isinstance(error, Blocked), reason
    assert "max" not in error.message.lower()  # nothing points the user at max tokens
    assert billed(error) == (1200, 40, 300, 1000)


def test_model_armor_with_partial_text_is_still_blocked() -> None:
    error = failure(
        {"candidates": [candidate("MODEL_ARMOR", {"text": "yes"})], "usageMetadata": USAGE}
    )
    assert isinstance(error, Blocked)


@pytest.mark.parametrize(
    "reason",
    [
        "MAX_TOKENS",
        "OTHER",
        "LANGUAGE",
        "MALFORMED_FUNCTION_CALL",
        "FINISH_REASON_UNSPECIFIED",
        "A_REASON_FROM_NEXT_YEAR",
        None,
    ],
)
def test_any_other_end_is_truncated_and_its_text_is_not_read(reason: str | None) -> None:
    error = failure({"candidates": [candidate(reason, {"text": "yes"})], "usageMetadata": USAGE})
    assert isinstance(error, TruncatedReply), reason
    assert billed(error) == (1200, 40, 300, 1000)


@pytest.mark.parametrize(
    "body", [{}, {"usageMetadata": USAGE}, {"candidates": [], "usageMetadata": USAGE}]
)
def test_no_candidates_and_no_block_is_truncated(body: dict[str, Any]) -> None:
    error = failure(body)
    assert isinstance(error, TruncatedReply)
    assert "no candidates" in error.message
    assert billed(error) == ((1200, 40, 300, 1000) if body else (0, 0, 0, 0))


NO_THOUGHTS = {"promptTokenCount": 900, "candidatesTokenCount": 0, "totalTokenCount": 900}


@pytest.mark.parametrize("content", [{}, {"role": "model"}, {"role": "model", "parts": []}])
def test_a_stop_with_no_text_is_unreadable_and_billed(content: dict[str, Any]) -> None:
    body = {
        "candidates": [{"content": content, "finishReason": "STOP"}],
        "usageMetadata": NO_THOUGHTS,
    }
    error = failure(body)
    assert isinstance(error, UnparseableReply)
    assert billed(error) == (900, 0, 0, 0)


def test_a_stop_with_no_text_after_thinking_is_truncated() -> None:
    """Thinking billed and no answer: the model spent its allowance, it did not answer empty."""
    body = {"candidates": [{"content": {}, "finishReason": "STOP"}], "usageMetadata": USAGE}
    error = failure(body)
    assert isinstance(error, TruncatedReply) and "no text after thinking" in error.message
    assert billed(error) == (1200, 40, 300, 1000)


def test_a_stop_whose_answer_is_a_function_call_is_unreadable_even_after_thinking() -> None:
    """The model finished, in the wrong form: not truncated, whatever thinking it billed."""
    call = {"functionCall": {"name": "get_user_city", "args": {}}, "thoughtSignature": "AY89"}
    body = {"candidates": [candidate("STOP", call)], "usageMetadata": USAGE}
    error = failure(body)
    assert isinstance(error, UnparseableReply)
    assert "only functionCall" in error.message
    assert billed(error) == (1200, 40, 300, 1000)
    # Cut off while calling: truncated, as any end but STOP.
    assert isinstance(failure({"candidates": [candidate("MAX_TOKENS", call)]}), TruncatedReply)
