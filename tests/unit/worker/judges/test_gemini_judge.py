"""Our Gemini judge (worker/judges/gemini.py) through the real google-genai client, against the fake
server over HTTP: the system instruction reaches the server apart from the contents, and a
reply with no text is truncated (not merely unreadable) when it did not end normally."""

from __future__ import annotations

import pytest
from google import genai
from google.genai import types

from evalq.core.errors import TruncatedReply, UnparseableReply
from evalq.core.judge import JudgeRequest
from evalq.worker.judges.gemini import GeminiJudge
from evalq.worker.settings import Settings
from tests.conftest import FakeGemini
from tests.support.fake_http import RecordingBrain, serve_module

MODEL = "gemini-2.5-flash"


BRAIN = RecordingBrain(lambda request: "Four.")


base_url = serve_module(BRAIN)


def judge_for(url: str) -> GeminiJudge:
    return GeminiJudge(MODEL, Settings(gemini_base_url=url, transient_attempts=1))


def test_the_system_instruction_reaches_the_server_apart_from_the_contents(base_url: str) -> None:
    FakeGemini(base_url).script([])
    request = JudgeRequest(prompt="What is two and two?", system_instruction="Answer tersely.")
    reply = judge_for(base_url).generate(request)
    assert reply.text == "Four."
    seen = BRAIN.requests[-1]
    assert seen.system == "Answer tersely."
    assert seen.user_text == "What is two and two?"
    judge_for(base_url).generate(JudgeRequest(prompt="No guidance here."))
    assert (BRAIN.requests[-1].system, BRAIN.requests[-1].user_text) == ("", "No guidance here.")


def test_no_text_at_max_tokens_is_truncated(base_url: str) -> None:
    FakeGemini(base_url).script(
        [{"match": "cut-empty", "reply": "", "finish_reason": "MAX_TOKENS"}]
    )
    with pytest.raises(TruncatedReply, match="finish_reason MAX_TOKENS"):
        judge_for(base_url).generate(JudgeRequest(prompt="cut-empty please"))


def test_no_text_after_thinking_is_truncated_and_its_tokens_are_kept() -> None:
    judge = GeminiJudge(MODEL, Settings(), client=genai.Client(api_key="unused"))
    thinking_only = types.GenerateContentResponse(
        candidates=[
            types.Candidate(
                content=types.Content(
                    role="model", parts=[types.Part(text="Let me think...", thought=True)]
                ),
                finish_reason=types.FinishReason.STOP,
            )
        ],
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=40, candidates_token_count=0, thoughts_token_count=300
        ),
    )
    with pytest.raises(TruncatedReply) as caught:
        judge._reply(thinking_only)
    assert "no text after thinking" in caught.value.message
    assert "300 thinking tokens" in caught.value.message
    spent = caught.value.cost
    assert (spent.prompt_tokens, spent.output_tokens, spent.thought_tokens) == (40, 0, 300)
    empty_stop = thinking_only.model_copy(
        update={"usage_metadata": types.GenerateContentResponseUsageMetadata(prompt_token_count=4)}
    )
    with pytest.raises(UnparseableReply):
        judge._reply(empty_stop)  # stopped normally with nothing to say: unreadable


def test_a_200_reply_the_sdk_cannot_read_is_unparseable_once_with_its_tokens(base_url: str) -> None:
    """google-genai raises while modelling the body (a part's text that is not a string): the
    reply is paid for and would come back the same, so it is parse_error at once, with the
    body's usage, never retried and never an internal error that kills the task."""
    fake = FakeGemini(base_url)
    odd = {
        "candidates": [{"content": {"parts": [{"text": 5}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 31, "candidatesTokenCount": 2},
    }
    fake.script([{"match": "odd-body", "status": 200, "body": odd}])
    fake.reset()
    judge = GeminiJudge(MODEL, Settings(gemini_base_url=base_url, transient_attempts=3))
    with pytest.raises(UnparseableReply, match="google-genai could not read the reply") as caught:
        judge.generate(JudgeRequest(prompt="odd-body here"))
    assert (caught.value.cost.prompt_tokens, caught.value.cost.output_tokens) == (31, 2)
    assert fake.stats()["requests"] == 1


def test_a_bug_outside_the_sdk_reader_is_not_taken_for_a_reply(
    base_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only an exception raised where the SDK reads a body is a parse_error; any other one is
    a bug and propagates to the task (which records it on the job)."""
    judge = judge_for(base_url)

    def broken(**_: object) -> None:
        raise TypeError("a bug before any request")

    monkeypatch.setattr(judge._client.models, "generate_content", broken)
    with pytest.raises(TypeError, match="a bug before any request"):
        judge.generate(JudgeRequest(prompt="anything"))
