"""Which judges refuse log probabilities, so a --soft job on one is refused before it is stored
instead of pausing after its first calls.

A model that does not give them answers a request with response_logprobs with a 400
INVALID_ARGUMENT on every call. Recorded bodies (they win over docs, which lag):

- Gemini API, ``Logprobs is not enabled for models/<model>``:
  gemini-2.5-pro (github.com/googleapis/python-genai/issues/1921, 2026-01-07, whole body:
  {"error": {"code": 400, "message": "Logprobs is not enabled for models/gemini-2.5-pro",
  "status": "INVALID_ARGUMENT"}}; the same body in github.com/mscraftsman/generative-ai/issues/135),
  gemini-2.5-flash (python-genai's own test table, google/genai/tests/models/
  test_generate_content_config_zero_value.py, expects it from the Gemini API and no error from
  Vertex; langchain-ai/langchain-google#1266), gemini-2.5-flash-lite
  (Vela-Research/think-reason-learn#34), gemini-2.5-pro-preview-03-25
  (google-gemini/deprecated-generative-ai-python#238).
- Vertex AI gives them for gemini-2.5-pro, gemini-2.5-flash, gemini-2.0-flash-001 and
  gemini-2.0-flash-lite-001 (vercel/ai#5418, 2025-07-07, a run against each), but refused
  gemini-3.5-flash with ``Unable to submit request because Logprobs is not supported for this
  model.`` (GoogleCloudPlatform/generative-ai#2947, 2026-06-22).
- gemini-2.0-flash gives them on the Gemini API (python-genai#1921: "Only works when I change
  model name to gemini-2.0-flash"; python-genai's test_log_probs runs on it).

A model in neither list is sent as asked: if it refuses, the 400 comes back on every call and
evalq.worker.judges.fatal_errors pauses the job with that message after EVALQ_FATAL_ERROR_LIMIT
refusals (the calls before are unscored judge_error questions, never scored without a probability).
"""

from __future__ import annotations

from collections.abc import Iterable

# Name prefixes (a version suffix such as -preview-03-25 or -001 matches its family).
GEMINI_API_REFUSES: tuple[str, ...] = ("gemini-2.5-pro", "gemini-2.5-flash")
VERTEX_REFUSES: tuple[str, ...] = ("gemini-3.5-flash",)


def refuses_logprobs(model: str, vertex: bool) -> bool:
    """Whether the model is recorded refusing log probabilities on this API."""
    name = model.rsplit("/", 1)[-1].lower()
    return name.startswith(VERTEX_REFUSES if vertex else GEMINI_API_REFUSES)


def refusal_message(models: Iterable[str], vertex: bool) -> str | None:
    """Why a --soft job on these validator judges would be refused by the API, or None."""
    refusing = sorted({m for m in models if refuses_logprobs(m, vertex)})
    if not refusing:
        return None
    api = "Vertex AI" if vertex else "the Gemini API"
    said = (
        "Unable to submit request because Logprobs is not supported for this model."
        if vertex
        else f"Logprobs is not enabled for models/{refusing[0]}"
    )
    return (
        f"--soft needs log probabilities, and {api} refuses them for {', '.join(refusing)} "
        f'(400 INVALID_ARGUMENT "{said}"); choose a validator judge that gives them '
        "(e.g. gemini-2.0-flash), or drop --soft"
    )
