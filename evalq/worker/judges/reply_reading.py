"""The one reading of a generateContent reply, online or from a batch's results: blocks,
finish reasons, answers in the wrong form, empty text, and what every reply bills
(docs/concepts/unscored.md); and a 200 body google-genai itself could not model."""

from __future__ import annotations

from typing import Any

from google.genai import types

from evalq.core.errors import Blocked, CallCost, TruncatedReply, UnparseableReply
from evalq.core.judge import SIMULATED_MODEL_VERSION, JudgeReply, ensure_complete, token_counts
from evalq.worker.judges.logprobs import reply_logprobs

# Finish reasons that mean a safety or policy filter withheld the reply (google-genai 3.4's
# FinishReason, and MODEL_ARMOR, Model Armor's filter on Vertex): `blocked`, never `truncated`,
# so the user looks at the content and the filters, not at max_output_tokens. JAILBREAK is a
# BlockedReason today; listed so a candidate stopped for it reads the same. Every other reason
# but STOP (MAX_TOKENS, OTHER, LANGUAGE, MALFORMED_FUNCTION_CALL, an unknown value, none) is a
# reply that did not end normally: `truncated` (evalq.core.judge.incomplete).
BLOCKING_FINISH_REASONS = frozenset(
    {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}
    | {"IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "MODEL_ARMOR", "JAILBREAK"}
)


def _text_of(value: Any) -> str:
    return value.value if hasattr(value, "value") else str(value)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def billed_cost(usage: Any) -> CallCost:
    """What a reply's usageMetadata bills, as an error carries it: every 200 reply is paid for,
    whatever evalq makes of it (blocked, empty, cut off, several candidates)."""
    if usage is None:
        return CallCost()
    return CallCost(
        prompt_tokens=_int(usage.prompt_token_count),
        output_tokens=_int(usage.candidates_token_count),
        thought_tokens=_int(usage.thoughts_token_count),
        cached_tokens=_int(usage.cached_content_token_count),
    )


def reply_from_response(model: str, response: types.GenerateContentResponse) -> JudgeReply:
    """A generateContent response as evalq's reply, online or from a batch's results: the one
    reading of blocks, finish reasons, empty text and usage (docs/concepts/unscored.md).

    - promptFeedback with a blockReason: `blocked`, whatever else the body holds.
    - no candidates (and no block): `truncated`, the model gave no reply at all.
    - the first candidate is read (several may come back; usage bills them all). A safety or
      policy finish reason (BLOCKING_FINISH_REASONS) is `blocked`; any reason but STOP is
      `truncated`; STOP with no text is `parse_error`, and with only thoughts `truncated`.
    - thought parts are never read as the answer.
    Every outcome carries the body's usage, so its tokens count and the budget sees them."""
    version = response.model_version
    simulated = bool(version and version.startswith(SIMULATED_MODEL_VERSION))
    usage = response.usage_metadata
    billed = billed_cost(usage)
    feedback = response.prompt_feedback
    if feedback is not None and feedback.block_reason is not None:
        detail = f" ({feedback.block_reason_message})" if feedback.block_reason_message else ""
        raise Blocked(f"prompt blocked: {_text_of(feedback.block_reason)}{detail}", cost=billed)
    if not response.candidates:
        counts = token_counts(billed.prompt_tokens, billed.output_tokens, billed.thought_tokens)
        raise TruncatedReply(
            f"the reply has no candidates and no block reason ({counts}): no answer to read",
            cost=billed,
        )
    candidate = response.candidates[0]
    finish = _text_of(candidate.finish_reason) if candidate.finish_reason is not None else None
    if finish in BLOCKING_FINISH_REASONS:
        raise Blocked(f"reply withheld: finish_reason {finish}", cost=billed)
    parts = candidate.content.parts if candidate.content and candidate.content.parts else []
    text = "".join(p.text for p in parts if p.text and not p.thought)
    reply = JudgeReply(
        text=text,
        model=model,
        model_version=version,
        prompt_tokens=billed.prompt_tokens,
        output_tokens=billed.output_tokens,
        cached_tokens=billed.cached_tokens,
        finish_reason=finish,
        simulated=simulated,
        thought_tokens=billed.thought_tokens,
        logprobs=reply_logprobs(candidate),
    )
    if not text:
        # A normal stop whose answer is another kind of part (a functionCall, say) finished
        # in the wrong form: unreadable, thinking or not. Nothing after thinking, or cut off
        # before any text: truncated (with its tokens, so they are still counted); an empty
        # text after a normal stop is unreadable.
        if finish == "STOP" and (kinds := _answer_kinds(parts)):
            raise UnparseableReply(
                f"the reply holds no text, only {', '.join(kinds)} (finish_reason STOP)",
                cost=billed,
            )
        ensure_complete(reply)
        raise UnparseableReply(f"empty reply (finish_reason {finish})", cost=billed)
    return reply


def _answer_kinds(parts: list[types.Part]) -> list[str]:
    """The kinds of the non-thought parts that are not text (`functionCall`, `inlineData`,
    ...), as the wire names them, in order and once each."""
    kinds: dict[str, None] = {}
    for part in parts:
        if part.thought:
            continue
        for name, value in part:
            if value is not None and name not in ("text", "thought", "thought_signature"):
                kinds[_camel(name)] = None
    return list(kinds)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def usage_in(body: dict[str, Any]) -> CallCost | None:
    """usageMetadata from a raw body, in the wire's camelCase or the SDK's snake_case."""
    usage = body.get("usageMetadata", body.get("usage_metadata"))
    if not isinstance(usage, dict):
        return None

    def count(camel: str, snake: str) -> int:
        return _int(usage.get(camel, usage.get(snake)))

    return CallCost(
        prompt_tokens=count("promptTokenCount", "prompt_token_count"),
        output_tokens=count("candidatesTokenCount", "candidates_token_count"),
        thought_tokens=count("thoughtsTokenCount", "thoughts_token_count"),
        cached_tokens=count("cachedContentTokenCount", "cached_content_token_count"),
    )


# Where google-genai turns a reply body into its types: an exception raised inside one of
# these read a 200 reply it could not model (a field of a type it does not expect).
_READERS = ("_from_response", "_from_mldev", "_from_vertex", "model_validate")


def unreadable_reply(exc: BaseException) -> UnparseableReply | None:
    """The SDK's own failure to read a 200 reply, as `parse_error` (the reply is paid for and
    would come back the same: asking again is no cure), with the body's usage where it can
    still be found. None when the exception came from anywhere else (a bug to surface)."""
    frames, tb = [], exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    readers = [f for f in frames if f.f_code.co_name.endswith(_READERS)]
    if not readers:
        return None
    billed = CallCost()
    for frame in readers:
        body = frame.f_locals.get("response", frame.f_locals.get("from_object"))
        if isinstance(body, dict) and (usage := usage_in(body)) is not None:
            billed = usage
            break
    return UnparseableReply(
        f"google-genai could not read the reply: {type(exc).__name__}: {str(exc)[:300]}",
        cost=billed,
    )
