"""The fake server thinks like the real 2.5 models, seen through the real google-genai client
over HTTP: default thinking billed in thoughtsTokenCount, budgets honoured or refused with the
real 400s, and thinking that eats maxOutputTokens leaving no answer."""

from __future__ import annotations

import pytest
from google import genai
from google.genai import errors, types

from tests.support.fake_http import serve_module

base_url = serve_module()


def ask_thinking(
    client: genai.Client,
    model: str,
    budget: int | None = None,
    *,
    level: str | None = None,
    max_tokens: int | None = None,
    text: str = "Is there a red circle? Answer yes or no.",
) -> types.GenerateContentResponse:
    thinking = None
    if budget is not None or level is not None:
        thinking = types.ThinkingConfig(
            thinking_budget=budget,
            thinking_level=types.ThinkingLevel(level.upper()) if level else None,
        )
    config = types.GenerateContentConfig(thinking_config=thinking, max_output_tokens=max_tokens)
    return client.models.generate_content(model=model, contents=text, config=config)


def thoughts(response: types.GenerateContentResponse) -> int:
    assert response.usage_metadata is not None
    return response.usage_metadata.thoughts_token_count or 0


@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-2.5-pro"])
def test_the_default_thinks_and_bills_thought_tokens(
    genai_client: genai.Client, model: str
) -> None:
    first, again = ask_thinking(genai_client, model), ask_thinking(genai_client, model)
    assert thoughts(first) > 0
    assert thoughts(first) == thoughts(again)  # deterministic
    usage = first.usage_metadata
    assert usage is not None and usage.prompt_token_count and usage.candidates_token_count
    assert usage.total_token_count == (
        usage.prompt_token_count + usage.candidates_token_count + thoughts(first)
    )
    assert first.text  # the answer is still there


def test_flash_lite_does_not_think_unless_asked(genai_client: genai.Client) -> None:
    assert thoughts(ask_thinking(genai_client, "gemini-2.5-flash-lite")) == 0
    assert thoughts(ask_thinking(genai_client, "gemini-2.5-flash-lite", 1024)) > 0


@pytest.mark.parametrize(
    ("model", "thinking_budget"), [("gemini-2.5-flash", None), ("gemini-2.5-flash-lite", 1024)]
)
def test_budget_zero_switches_thinking_off_where_allowed(
    genai_client: genai.Client, model: str, thinking_budget: int | None
) -> None:
    assert thoughts(ask_thinking(genai_client, model, thinking_budget)) > 0
    response = ask_thinking(genai_client, model, 0)
    assert thoughts(response) == 0
    assert response.usage_metadata is not None
    assert response.usage_metadata.thoughts_token_count is None  # absent, as on the real API


def test_a_budget_bounds_the_thinking(genai_client: genai.Client) -> None:
    dynamic = thoughts(ask_thinking(genai_client, "gemini-2.5-pro"))
    assert thoughts(ask_thinking(genai_client, "gemini-2.5-pro", 128)) == 128 < dynamic
    assert thoughts(ask_thinking(genai_client, "gemini-2.5-pro", -1)) == dynamic


@pytest.mark.parametrize(
    ("model", "budget", "level", "message"),
    [
        ("gemini-2.5-pro", 0, None, "Budget 0 is invalid. This model only works in thinking mode."),
        (
            "gemini-2.5-flash",
            30000,
            None,
            "The thinking budget 30000 is invalid. Please choose a value between 0 and 24576.",
        ),
        (
            "gemini-2.5-flash-lite",
            128,
            None,
            "The thinking budget 128 is invalid. Please choose a value between 512 and 24576.",
        ),
        ("gemini-2.5-flash", None, "low", "Thinking level is not supported for this model."),
        (
            "gemini-3-pro-preview",
            1024,
            "low",
            "You can only set only one of thinking budget and thinking level.",
        ),
    ],
)
def test_refused_thinking_is_the_real_400(
    genai_client: genai.Client, model: str, budget: int | None, level: str | None, message: str
) -> None:
    with pytest.raises(errors.ClientError) as caught:
        ask_thinking(genai_client, model, budget, level=level)
    assert caught.value.code == 400
    assert caught.value.status == "INVALID_ARGUMENT"
    assert caught.value.message == message


def test_gemini_3_takes_levels(genai_client: genai.Client) -> None:
    high = thoughts(ask_thinking(genai_client, "gemini-3-flash-preview", level="high"))
    low = thoughts(ask_thinking(genai_client, "gemini-3-flash-preview", level="low"))
    assert 0 < low < high
    assert thoughts(ask_thinking(genai_client, "gemini-3-flash-preview", level="minimal")) == 0
    with pytest.raises(errors.ClientError):
        ask_thinking(
            genai_client, "gemini-3-pro-preview", level="minimal"
        )  # Pro takes low and high only


def test_thinking_that_eats_max_output_tokens_leaves_no_answer(genai_client: genai.Client) -> None:
    response = ask_thinking(genai_client, "gemini-2.5-flash", max_tokens=64)
    assert response.candidates is not None
    candidate = response.candidates[0]
    assert candidate.finish_reason == types.FinishReason.MAX_TOKENS
    assert candidate.content is None or not candidate.content.parts
    assert response.text is None
    assert thoughts(response) == 64


def test_room_after_the_thinking_is_left_for_the_answer(genai_client: genai.Client) -> None:
    budget = 256
    response = ask_thinking(genai_client, "gemini-2.5-flash", budget, max_tokens=budget + 200)
    assert response.candidates is not None
    assert response.candidates[0].finish_reason == types.FinishReason.STOP
    assert response.text
    assert thoughts(response) == budget
