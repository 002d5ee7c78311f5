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
"""

from __future__ import annotations

import importlib
import math
import re
import struct
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from io import BytesIO
from typing import Any, Protocol

from pydantic import BaseModel, Field

from evalq.core.judge import JudgeRequest, MediaPart
from evalq.core.kv import KeyValue
from evalq.core.models import JobConfig, RowInput
from evalq.core.pricing import Price, call_cost_nanos, describe, price_for, usd
from evalq.core.thinking import apply, output_allowance, resolve

# ---- media tokens, by Google's published rules (docs/gemini-facts.md, "Token counting") ----

IMAGE_TILE_TOKENS = 258  # an image with both sides <= 384 px, or each 768x768 tile of a larger
IMAGE_SMALL_PX = 384
IMAGE_TILE_PX = 768
VIDEO_TOKENS_PER_S = 263  # default media resolution
AUDIO_TOKENS_PER_S = 32
PDF_PAGE_TOKENS = 258
ASSUMED_VIDEO_S = 10.0  # a video whose length can not be read here
ASSUMED_PDF_PAGES = 1
CHARS_PER_TOKEN = 4  # "a token is equivalent to about 4 characters"


def image_tokens(width: int, height: int) -> int:
    if width <= IMAGE_SMALL_PX and height <= IMAGE_SMALL_PX:
        return IMAGE_TILE_TOKENS
    tiles = math.ceil(width / IMAGE_TILE_PX) * math.ceil(height / IMAGE_TILE_PX)
    return tiles * IMAGE_TILE_TOKENS


def _image_size(data: bytes) -> tuple[int, int] | None:
    try:
        from PIL import Image

        with Image.open(BytesIO(data)) as image:
            return int(image.size[0]), int(image.size[1])
    except Exception:  # any undecodable bytes: the size is unknown here
        return None


def video_seconds(data: bytes) -> float | None:
    """A video's length from its container header (MP4/MOV mvhd, AVI avih), or None."""
    try:
        if data[4:8] == b"ftyp":
            return _mvhd_seconds(data, 0, len(data))
        if data[:4] == b"RIFF" and data[8:12] == b"AVI " and data[12:16] == b"LIST":
            at = data.find(b"avih")  # MainAVIHeader: microseconds per frame, ..., total frames
            if at > 0:
                (per_frame_us,) = struct.unpack_from("<I", data, at + 8)
                (frames,) = struct.unpack_from("<I", data, at + 24)
                return per_frame_us * frames / 1_000_000 if per_frame_us and frames else None
    except (struct.error, ValueError, IndexError):
        return None
    return None


def _mvhd_seconds(data: bytes, start: int, end: int) -> float | None:
    at = start
    while at + 8 <= end:
        size, kind = struct.unpack_from(">I4s", data, at)
        header = 8
        if size == 1:
            size, header = struct.unpack_from(">Q", data, at + 8)[0], 16
        elif size == 0:
            size = end - at
        if size < header:
            return None
        if kind == b"moov":
            return _mvhd_seconds(data, at + header, at + size)
        if kind == b"mvhd":
            body = at + header
            if data[body] == 1:
                scale, duration = struct.unpack_from(">IQ", data, body + 20)
            else:
                scale, duration = struct.unpack_from(">II", data, body + 12)
            return duration / scale if scale else None
        at += size
    return None


_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def pdf_pages(data: bytes) -> int | None:
    pages = len(_PDF_PAGE.findall(data))
    return pages or None


def media_tokens(part: MediaPart, text_tokens: Callable[[str], int]) -> tuple[int, str | None]:
    """(tokens, a note when the figure rests on an assumption) for one media part."""
    mime = part.mime_type
    data = part.data
    if mime.startswith("image/"):
        size = _image_size(data) if data is not None else None
        if size is None:
            return IMAGE_TILE_TOKENS, "images whose size is not known here count as one tile"
        return image_tokens(*size), None
    if mime.startswith("video/"):
        seconds = video_seconds(data) if data is not None else None
        if seconds is None:
            return (
                round(ASSUMED_VIDEO_S * VIDEO_TOKENS_PER_S),
                f"videos whose length is not known here count as {ASSUMED_VIDEO_S:g} s",
            )
        return math.ceil(seconds * VIDEO_TOKENS_PER_S), None
    if mime.startswith("audio/"):
        return round(
            ASSUMED_VIDEO_S * AUDIO_TOKENS_PER_S
        ), f"audio counts as {ASSUMED_VIDEO_S:g} s (its length is not read)"
    if mime == "application/pdf":
        pages = pdf_pages(data) if data is not None else None
        if pages is None:
            return (
                ASSUMED_PDF_PAGES * PDF_PAGE_TOKENS,
                f"PDFs whose pages are not counted here count as {ASSUMED_PDF_PAGES} page",
            )
        return pages * PDF_PAGE_TOKENS, None
    if mime.startswith("text/") and data is not None:
        return text_tokens(data.decode("utf-8", errors="replace")), None
    return IMAGE_TILE_TOKENS, f"{mime} media not fetched here counts as {IMAGE_TILE_TOKENS} tokens"


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
    ) -> None:
        """Count ``times`` calls of this request to ``model``, each answered in about
        ``answer_tokens`` tokens after the thinking its role is allowed. A request whose reply
        the call cache already holds costs nothing and is counted apart."""
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
        if price is not None:
            tally.cost_nanos += call_cost_nanos(price, prompt, answer_tokens, thought) * times
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


# ---- the report ---------------------------------------------------------------------------


class PlannedCalls(BaseModel):
    role: str
    model: str
    calls: int
    prompt_tokens: int
    output_tokens: int  # the answers (evalq's estimate per call kind)
    thought_tokens: int  # the thinking allowance of the role, billed as output
    cost_usd: float | None  # None: no price known for the model
    price: str | None = None


class RejectedRow(BaseModel):
    line: int
    id: str
    reason: str = "input_error"
    error: str


class DryRunReport(BaseModel):
    """What `evalq run --dry-run` prints: the plan, its tokens, cost and time, and the rows a
    real run would fail. Nothing was enqueued and no generate call was made."""

    metric: str
    dataset: str
    dry_run: bool = True
    rows_total: int
    rows_planned: int
    rows_rejected: int
    rejected: list[RejectedRow] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    judge_models: list[str] = Field(default_factory=list)
    thinking: dict[str, int | str] = Field(default_factory=dict)
    calls: list[PlannedCalls] = Field(default_factory=list)
    calls_total: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    thought_tokens: int = 0
    cost_usd: float | None = None
    cost_usd_batch: float | None = None  # the same calls at Batch API prices (not yet used)
    cost_by_role: dict[str, float | None] = Field(default_factory=dict)
    cost_note: str | None = None
    price_date: str | None = None
    counts: dict[str, int] = Field(default_factory=dict)  # rubrics, questions, samples, pairs
    time_s: float | None = None  # at the configured quota (a lower bound)
    time_by_model_s: dict[str, float | None] = Field(default_factory=dict)
    time_note: str | None = None
    token_method: str = ""
    notes: list[str] = Field(default_factory=list)


QuotaLookup = Callable[[str], tuple[int | None, int | None]]  # model -> (rpm, tpm)


def quota_time(
    tallies: Mapping[tuple[str, str], CallTally], quota: QuotaLookup
) -> tuple[float | None, dict[str, float | None], str]:
    """Seconds the calls take at the configured quota: per model the slower of requests and
    input tokens per minute; models are paced apart, so the job takes the slowest one. A lower
    bound (latency, workers and retries add to it)."""
    per_model: dict[str, list[int]] = {}
    for (_, model), tally in tallies.items():
        entry = per_model.setdefault(model, [0, 0])
        entry[0] += tally.calls
        entry[1] += tally.prompt
    times: dict[str, float | None] = {}
    missing: list[str] = []
    for model, (calls, tokens) in sorted(per_model.items()):
        rpm, tpm = quota(model)
        if rpm is None and tpm is None:
            times[model] = None
            missing.append(model)
            continue
        minutes = max(calls / rpm if rpm else 0.0, tokens / tpm if tpm else 0.0)
        times[model] = minutes * 60
    if missing:
        note = (
            f"no quota configured for {', '.join(missing)} (EVALQ_RATE_LIMITS): the time depends "
            "on the judges' latency and the workers, so it is not estimated"
        )
        return None, times, note
    total = max((t for t in times.values() if t is not None), default=0.0)
    note = "at the configured quota (EVALQ_RATE_LIMITS): a lower bound; latency adds to it"
    return total, times, note


def report(
    *,
    metric: str,
    dataset: str,
    job: JobConfig,
    env: DryEnv,
    rows_total: int,
    planned: int,
    rejected: Iterable[RejectedRow],
    warnings: list[str],
    quota: QuotaLookup,
) -> DryRunReport:
    calls: list[PlannedCalls] = []
    unknown: set[str] = set()
    by_role: dict[str, float | None] = {}
    total, batch = 0, 0
    for (role, model), tally in sorted(env.tallies.items()):
        price = price_for(model, env.prices)
        cost = usd(tally.cost_nanos) if price is not None else None
        if price is None:
            unknown.add(model)
        else:
            total += tally.cost_nanos
            batch += tally.batch_nanos
        before = by_role.get(role, 0.0)
        by_role[role] = None if before is None or cost is None else before + cost
        calls.append(
            PlannedCalls(
                role=role,
                model=model,
                calls=tally.calls,
                prompt_tokens=tally.prompt,
                output_tokens=tally.output,
                thought_tokens=tally.thought,
                cost_usd=cost,
                price=describe(price) if price is not None else None,
            )
        )
    dates = sorted(
        {p.date for c in calls if (p := price_for(c.model, env.prices)) is not None and p.date}
    )
    time_s, by_model, time_note = quota_time(env.tallies, quota)
    rejected_rows = list(rejected)
    return DryRunReport(
        metric=metric,
        dataset=dataset,
        rows_total=rows_total,
        rows_planned=planned,
        rows_rejected=len(rejected_rows),
        rejected=rejected_rows,
        warnings=warnings,
        judge_models=list(job.judge_models or [job.judge_model]),
        thinking=dict(job.thinking),
        calls=calls,
        calls_total=sum(c.calls for c in calls),
        prompt_tokens=sum(c.prompt_tokens for c in calls),
        output_tokens=sum(c.output_tokens for c in calls),
        thought_tokens=sum(c.thought_tokens for c in calls),
        cost_usd=None if unknown else usd(total),
        cost_usd_batch=None if unknown else usd(batch),
        cost_by_role=by_role,
        cost_note=(
            f"no price known for {', '.join(sorted(unknown))}: its tokens are shown, its cost "
            "and the total are unknown (set EVALQ_PRICES to price it)"
            if unknown
            else None
        ),
        price_date=", ".join(dates) or None,
        counts=dict(sorted(env.counters.items())),
        time_s=time_s,
        time_by_model_s=by_model,
        time_note=time_note,
        token_method=env.counter.method,
        notes=env.notes,
    )
