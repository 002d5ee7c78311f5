"""A dry run: what a job would ask and what it would cost, without asking anything.

Each metric plans a row's calls in its own module (``dry_plan``), with the very request
builders it uses when it runs, and hands each request to a DryEnv instead of a judge. The env
counts tokens (text by a counter, media by Google's published rules), adds the thinking the
role is allowed (thinking is billed as output, so the allowance is the estimate: a ceiling,
not an average), prices each call from the price table and tallies everything per role and
model. Nothing is enqueued or stored and no generate call is made.

What is exact and what is estimated, stated in the report:
- exact: rows, calls per row (judges x samples, both pairwise orders, every rank pair), the
  questions of rows that bring their own and of rubrics already in the cache;
- estimated: questions of rubrics still to write (one per content word of the prompt),
  answers' lengths (evalq's own figures per call kind), text tokens (4 characters per token
  unless the SDK's local tokenizer or count_tokens is used), media whose size is not known
  here (remote media is not fetched), responses still to be generated (a typical length);
- not counted: the one gap re-ask a rubric or labelling may need, retries, and 429s.

Media tokens are counted in evalq.core.media.tokens; the report is built in
evalq.core.dry_report.
"""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from evalq.core.judge import JudgeRequest, MediaPart
from evalq.core.media.tokens import media_tokens
from evalq.core.models import JobConfig, RowInput
from evalq.core.pricing import Price, call_cost_nanos, price_for
from evalq.core.shared_cache import KeyValue
from evalq.core.thinking import apply, output_allowance, resolve

__all__ = [
    "CallTally",
    "CharsCounter",
    "DryEnv",
    "MetricDryPlan",
    "SdkLocalCounter",
    "TextCounter",
    "content_words",
    "expected_questions",
    "local_counter",
    "placeholder_response",
]

CHARS_PER_TOKEN = 4  # "a token is equivalent to about 4 characters"


# ---- text tokens ----------------------------------------------------------------------------


class TextCounter(Protocol):
    method: str

    def count(self, model: str, text: str) -> int: ...


class CharsCounter:
    """Google's rule of thumb, about 4 characters per token: for English prose it is close; for
    code, JSON and other scripts it can be off either way."""

    method = "estimate, 4 characters per token"

    def count(self, model: str, text: str) -> int:
        return math.ceil(len(text) / CHARS_PER_TOKEN)


class SdkLocalCounter:
    """google-genai's local tokenizer (text only); built per model on first use. A model it
    can not load (no tokenizer for it, or its model file can not be fetched offline) is counted
    at 4 characters per token, and ``failures`` says why."""

    def __init__(self) -> None:
        self.method = "google-genai local tokenizer"
        self._tokenizers: dict[str, Any] = {}
        self._fallback = CharsCounter()
        self.failures: list[str] = []

    def count(self, model: str, text: str) -> int:
        name = model.rsplit("/", 1)[-1]
        if name not in self._tokenizers:
            try:
                from google.genai.local_tokenizer import LocalTokenizer

                self._tokenizers[name] = LocalTokenizer(model_name=name)
            except Exception as exc:  # no sentencepiece, no model file, unknown model
                self._tokenizers[name] = None
                self.failures.append(
                    f"local tokenizer for {name}: {type(exc).__name__}: {exc}"[:300]
                    + "; counted at 4 characters per token"
                )
        tokenizer = self._tokenizers[name]
        if tokenizer is None:
            return self._fallback.count(model, text)
        return int(tokenizer.count_tokens(text).total_tokens or 0)


def local_counter() -> tuple[TextCounter, str | None]:
    """The SDK's local tokenizer when it loads offline, else the 4-characters estimate, with
    the reason it was not used."""
    try:
        importlib.import_module("sentencepiece")  # the SDK's tokenizer needs it
        importlib.import_module("google.genai.local_tokenizer")
    except Exception as exc:
        reason = (
            "google-genai's local tokenizer is not usable here "
            f"({type(exc).__name__}: {exc}); text counted at 4 characters per token"
        )
        return CharsCounter(), reason
    return SdkLocalCounter(), None


# ---- the environment a metric plans against ------------------------------------------------


@dataclass
class CallTally:
    calls: int = 0
    prompt: int = 0
    output: int = 0
    thought: int = 0
    cost_nanos: int = 0
    batch_nanos: int = 0
    max_prompt: int = 0
    # Of `calls` and `cost_nanos`, what adaptive repeats (`--samples auto`) ask only while a
    # verdict is undecided: the range's top is every call, its bottom every verdict decided at
    # the minimum.
    optional_calls: int = 0
    optional_nanos: int = 0


@dataclass
class DryEnv:
    """What a metric's dry_plan sees: the job, the rubric cache, loaded media, and ``call``."""

    job: JobConfig
    counter: TextCounter
    prices: Mapping[str, Price]
    media_loader: Callable[[RowInput, str], MediaPart]
    kv: KeyValue | None = None
    # True when the judge-call cache already holds this exact request's reply (the request as
    # sent: thinking applied): a real run would not pay for it. None: not probed.
    cache_probe: Callable[[str, JudgeRequest], bool] | None = None
    answer_allowance: int = 4096  # EVALQ_MAX_OUTPUT_TOKENS, part of the request as sent
    tallies: dict[tuple[str, str], CallTally] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    _seen: set[str] = field(default_factory=set)
    _media_tokens: dict[int, int] = field(default_factory=dict)

    @property
    def options(self) -> dict[str, Any]:
        return self.job.options

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def mark(self) -> tuple[dict[tuple[str, str], CallTally], dict[str, int], set[str]]:
        """A snapshot to roll back to when a row turns out bad half way through its plan."""
        tallies = {key: replace(tally) for key, tally in self.tallies.items()}
        return tallies, dict(self.counters), set(self._seen)

    def rollback(
        self, mark: tuple[dict[tuple[str, str], CallTally], dict[str, int], set[str]]
    ) -> None:
        self.tallies, self.counters, self._seen = mark[0], mark[1], mark[2]

    def count(self, name: str, amount: int = 1) -> None:
        self.counters[name] = self.counters.get(name, 0) + amount

    def media(self, row: RowInput, field_name: str) -> MediaPart:
        """The row's media as a worker would load it (local files are read and checked; remote
        ones are not fetched); raises InputError, failing the row as a real run would."""
        return self.media_loader(row, field_name)

    def cached(self, key: str) -> str | None:
        """A cached value (a rubric) a real run would reuse, or None."""
        if self.kv is None or not self.job.use_cache:
            return None
        return self.kv.get(key)

    def first(self, key: str) -> bool:
        """True the first time a key is seen in this run (a rubric written once per prompt)."""
        if key in self._seen:
            return False
        self._seen.add(key)
        return True

    def _part_tokens(self, part: MediaPart, model: str) -> int:
        key = id(part)
        if key not in self._media_tokens:
            tokens, note = media_tokens(part, lambda text: self.counter.count(model, text))
            if note:
                self.note(note)
            self._media_tokens[key] = tokens
        return self._media_tokens[key]

    def call(
        self,
        request: JudgeRequest,
        model: str,
        answer_tokens: int,
        *,
        times: int = 1,
        candidate: bool = False,
        optional: bool = False,
    ) -> None:
        """Count ``times`` calls of this request to ``model``, each answered in about
        ``answer_tokens`` tokens after the thinking its role is allowed. A request whose reply
        the call cache already holds costs nothing and is counted apart. ``optional``: a sample
        adaptive repeats ask only while the verdict is undecided (the range's top)."""
        if times <= 0:
            return
        role = "candidate" if candidate else request.role
        if self.cache_probe is not None and self.job.use_cache:
            sent = apply(
                replace(request, role=role), self.job.thinking, model, self.answer_allowance
            )
            if self.cache_probe(model, sent):
                self.count("calls served from the call cache", times)
                return
        text = request.prompt + (
            "\n" + request.system_instruction if request.system_instruction else ""
        )
        prompt = self.counter.count(model, text) + sum(
            self._part_tokens(part, model) for part in request.media
        )
        setting = self.job.thinking.get(role, "default")
        thought = output_allowance(0, request.thinking or resolve(setting, model), model)
        tally = self.tallies.setdefault((role, model), CallTally())
        tally.calls += times
        tally.prompt += prompt * times
        tally.output += answer_tokens * times
        tally.thought += thought * times
        tally.max_prompt = max(tally.max_prompt, prompt)
        price = price_for(model, self.prices)
        if optional:
            tally.optional_calls += times
        if price is not None:
            cost = call_cost_nanos(price, prompt, answer_tokens, thought) * times
            tally.cost_nanos += cost
            tally.optional_nanos += cost if optional else 0
            tally.batch_nanos += (
                call_cost_nanos(price, prompt, answer_tokens, thought, batch=True) * times
            )


class MetricDryPlan(Protocol):
    def dry_plan(self, row: RowInput, env: DryEnv) -> None: ...


# ---- content words: how many questions a rubric still to write is expected to hold ----------

_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "in",
        "on",
        "at",
        "to",
        "with",
        "without",
        "for",
        "from",
        "by",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "their",
        "his",
        "her",
        "into",
        "onto",
        "over",
        "under",
        "near",
        "next",
        "some",
        "any",
        "each",
        "every",
        "one",
        "very",
        "as",
        "than",
        "then",
        "also",
        "not",
        "no",
    ]
)
_WORD = re.compile(r"[^\W_]+(?:['-][^\W_]+)*")
MAX_ESTIMATED_QUESTIONS = 30


def content_words(prompt: str) -> list[str]:
    """Distinct words of the prompt that are not function words, in order."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(prompt.lower()):
        if word not in _STOP and (len(word) > 2 or word.isdigit()):
            seen.setdefault(word, None)
    return list(seen)


def placeholder_response(tokens: int) -> str:
    """Text of about ``tokens`` tokens (at 4 characters each) standing for a response not yet
    generated."""
    return "word " * int(tokens * CHARS_PER_TOKEN / 5)


def expected_questions(prompt: str) -> list[str]:
    """The keywords a rubric is expected to ask about: one per content word (at least one)."""
    words = content_words(prompt)[:MAX_ESTIMATED_QUESTIONS]
    return words or ["subject"]
