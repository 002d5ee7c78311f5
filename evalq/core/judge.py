"""The judge interface every backend implements (Gemini, the fake server through Gemini's API).

Domain code depends on this Protocol only, so it can be unit tested with an in-memory judge
and run against any backend without importing the SDK.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel

from evalq.core.errors import CallCost, TruncatedReply


@dataclass(frozen=True)
class MediaPart:
    """Media sent to the judge: inline bytes, or a URI the backend can fetch itself."""

    mime_type: str
    data: bytes | None = None
    uri: str | None = None

    @functools.cached_property
    def data_sha256(self) -> str | None:
        """The bytes' digest, for cache keys: computed once per part, as the same part (one
        loaded image or clip) goes into every question's request, and a large one costs a
        millisecond or more to hash each time."""
        return None if self.data is None else hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class Thinking:
    """What a request asks the model to think: a token budget (2.5 models; -1 dynamic, 0 off)
    or a level (Gemini 3 models). Never both: the API refuses that."""

    budget: int | None = None
    level: str | None = None


@dataclass(frozen=True)
class JudgeRequest:
    prompt: str
    # Guidance for the model, sent as Gemini's system instruction (not mixed with the content).
    system_instruction: str | None = None
    media: tuple[MediaPart, ...] = ()
    schema: type[BaseModel] | None = None
    temperature: float = 0.0
    # The answer's allowance (default EVALQ_MAX_OUTPUT_TOKENS); room for the role's thinking is
    # added on top before the call (evalq.core.thinking.apply), since thoughts count against it.
    max_output_tokens: int | None = None
    sample: int = 0  # the k-th of repeated samples; part of the call-cache key
    # Which role asks ("rubric", "validator", "judge"; the model under test is "candidate"):
    # the job's thinking setting for that role fills in `thinking` (evalq.core.thinking.apply).
    role: str = "judge"
    thinking: Thinking | None = None  # None: send no thinking configuration
    # How many top candidates per output token to ask log probabilities for (Gemini's
    # response_logprobs with logprobs=N); None asks for none. Gecko's --soft sets it.
    logprobs: int | None = None

    def estimated_tokens(self) -> int:
        """A pre-call token estimate for the rate limiter; corrected from usage afterwards."""
        return len(self.prompt) // 4 + 258 * len(self.media) + 1


@dataclass(frozen=True)
class TokenChoice:
    """One token the model chose or considered, with its natural-log probability."""

    token: str
    log_probability: float


@dataclass(frozen=True)
class TokenStep:
    """One decoding step: the token chosen and the top candidates considered (the chosen one
    may be missing from them, as the API documents)."""

    chosen: TokenChoice
    top: tuple[TokenChoice, ...] = ()


@dataclass(frozen=True)
class ReplyLogprobs:
    """A reply's token log probabilities (Gemini's logprobsResult and avgLogprobs), kept in
    the domain's terms so scoring never reads the SDK's types."""

    steps: tuple[TokenStep, ...]
    avg_logprob: float | None = None

    @classmethod
    def from_json(cls, data: Any) -> ReplyLogprobs | None:
        """Back from the dict ``dataclasses.asdict`` made of it (the call cache stores replies
        as JSON); None for anything else."""
        if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
            return None

        def choice(item: Any) -> TokenChoice:
            return TokenChoice(str(item["token"]), float(item["log_probability"]))

        steps = tuple(
            TokenStep(choice(s["chosen"]), tuple(choice(t) for t in s.get("top") or ()))
            for s in data["steps"]
        )
        avg = data.get("avg_logprob")
        return cls(steps, None if avg is None else float(avg))


# Every reply of the simulated judge (evalq's fake Gemini server) carries this modelVersion;
# evalq marks results from it as simulated wherever they are shown.
SIMULATED_MODEL_VERSION = "evalq-fake-gemini/simulated-judge"


@dataclass(frozen=True)
class JudgeReply:
    text: str
    model: str
    model_version: str | None
    prompt_tokens: int
    output_tokens: int
    finish_reason: str | None
    simulated: bool = False
    attempts: int = 1  # HTTP attempts it took, transient retries included
    cached: bool = False  # served from the call cache: no request was made
    limiter_wait_s: float = 0.0  # time spent waiting on the global rate limiter
    # Apart from output_tokens (the answer): thoughts are billed as output, and cached prompt
    # tokens (a part of prompt_tokens) are billed at the cached rate.
    thought_tokens: int = 0
    cached_tokens: int = 0
    logprobs: ReplyLogprobs | None = None  # when the request asked for them and they came
    # Batch mode: answered by an online call instead (its batch's results could not be matched
    # to it), so priced at the online rate.
    online: bool = False


NORMAL_STOP = "STOP"


@functools.cache
def reply_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A reply class's JSON schema, derived once per class: pydantic's schema generation is the
    costliest step of building a request, and a class's schema does not change. Callers must
    not modify the dict (the Gemini client hands the SDK a copy)."""
    return model.model_json_schema()


def token_counts(prompt: int, output: int, thought: int = 0) -> str:
    thinking = f", {thought} thinking tokens" if thought else ""
    return f"{prompt} prompt tokens, {output} output tokens{thinking}"


def incomplete(reply: JudgeReply) -> TruncatedReply | None:
    """Why a reply is not a whole answer, or None when it is.

    A reply counts only when the model stopped on its own (finish_reason STOP) and left some
    text. Anything else (MAX_TOKENS, another finish reason, none at all, or thinking that used
    up the budget before any text) means the model did not finish: what parses from the part
    it wrote is a fragment, and a fragment can read as a clean verdict ("grounded", "yes"). So
    the verdict is unscored as truncated, whatever the metric, and never read.
    """
    thinking_only = not reply.text.strip() and reply.thought_tokens > 0
    if reply.finish_reason == NORMAL_STOP and not thinking_only:
        return None
    ended = f"finish_reason {reply.finish_reason}" if reply.finish_reason else "no finish_reason"
    if thinking_only:
        ended += ", no text after thinking"
    counts = token_counts(reply.prompt_tokens, reply.output_tokens, reply.thought_tokens)
    billed = CallCost(
        prompt_tokens=reply.prompt_tokens,
        output_tokens=reply.output_tokens,
        thought_tokens=reply.thought_tokens,
        cached_tokens=reply.cached_tokens,
    )
    return TruncatedReply(
        f"the reply did not end normally ({ended}; {counts}); its text is not read",
        raw=reply.text[:2000] or None,
        cost=billed,
    )


def ensure_complete(reply: JudgeReply) -> JudgeReply:
    """The reply, if it is whole; raises TruncatedReply otherwise (see ``incomplete``)."""
    if (error := incomplete(reply)) is not None:
        raise error
    return reply


class Judge(Protocol):
    model: str

    def generate(self, request: JudgeRequest) -> JudgeReply:
        """Return the reply or raise an evalq.core.errors.JudgeError subclass."""
        ...
