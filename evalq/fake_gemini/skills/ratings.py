"""The simulated judge's pointwise ratings, pairwise choices, and candidate answers for ranking,
from plain word overlap with the inputs, so a rating depends on what it rates."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from statistics import fmean
from typing import TYPE_CHECKING

from evalq.fake_gemini.messages import read_message
from evalq.fake_gemini.prompt_grammar import blocks_by_kind, is_plain, metric_name, shows_field
from evalq.fake_gemini.protocol import schema_properties

if TYPE_CHECKING:
    from evalq.fake_gemini.protocol import FakeMedia, FakeRequest, SeesImages

LABEL = "[simulated judge]"
_WORD_RE = re.compile(r"[^\W_]+")  # letters and digits of any script: 大丈夫です is a word
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+")
_PDF_STRING_RE = re.compile(rb"\((?P<s>(?:\\.|[^\\)])*)\)\s*Tj")
_STOP_TEXT = """
    the and for are but not you all any can had her was one our out has his how its may new
    now old see two who did get him let say she too use that with have this will your from
    they been more when what which their there were would about into than them then these
    some could other such only also very just each many most much like over does done being
    because while where here those both after before between under again should answer
    response question simulated judge
"""
_STOP = frozenset(_STOP_TEXT.split())
_PROMPT_KINDS = ("prompt", "instruction", "question", "candidate_question")
_SOURCE_KINDS = ("context", "document", "candidate_context", "source")
_TIE_MARGIN = 0.02


def answer(request: FakeRequest, judge: SeesImages) -> str | None:
    properties = schema_properties(request.response_schema)
    blocks = blocks_by_kind(request.text)
    if "pairwise_choice" in properties or (
        not properties and shows_field(request.text, "pairwise_choice") and "response_a" in blocks
    ):
        return _pairwise(request, blocks)
    if {"explanation", "rating"} <= properties or (
        not properties and shows_field(request.text, "rating") and blocks
    ):
        return _pointwise(request, blocks)
    if not properties and request.system and is_plain(request.text):
        return _candidate_answer(request)
    return None


# ---- reading the request ----------------------------------------------------------------


def _pdf_text(data: bytes) -> str:
    """The literal strings a simple PDF shows with Tj (what our example documents use)."""
    pieces = []
    for m in _PDF_STRING_RE.finditer(data):
        raw = m.group("s")
        raw = re.sub(rb"\\([()\\])", rb"\1", raw)
        pieces.append(raw.decode("latin-1"))
    return " ".join(pieces)


def _media_text(media: list[FakeMedia]) -> str:
    texts = []
    for part in media:
        if part.data is None:
            continue
        if part.mime_type.startswith("text/"):
            texts.append(part.data.decode("utf-8", errors="replace"))
        elif part.mime_type == "application/pdf":
            texts.append(_pdf_text(part.data))
    return "\n".join(texts)


def _words(text: str) -> list[str]:
    return [w for w in _WORD_RE.findall(text.lower()) if len(w) > 2 and w not in _STOP]


# ---- assessing one response ---------------------------------------------------------------


@dataclass
class Material:
    """What a response is measured against, read once per request."""

    metric: str
    prompt: set[str] = field(default_factory=set)
    source: set[str] = field(default_factory=set)
    source_length: int = 0
    reference: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Assessment:
    quality: float
    notes: list[str]


def _material(request: FakeRequest, blocks: dict[str, str], rated: set[str]) -> Material:
    named = metric_name(request.text)
    metric = named.strip().lower() if named is not None else "custom"
    prompt = " ".join(blocks[k] for k in _PROMPT_KINDS if k in blocks)
    source = (
        " ".join(blocks[k] for k in _SOURCE_KINDS if k in blocks) + " " + _media_text(request.media)
    )
    other = " ".join(
        body
        for kind, body in blocks.items()
        if kind not in rated and kind not in (*_PROMPT_KINDS, *_SOURCE_KINDS, "reference")
    )
    source_words = _words(source + " " + other)
    return Material(
        metric=metric,
        prompt=set(_words(prompt)),
        source=set(source_words),
        source_length=len(source_words),
        reference=set(_words(blocks.get("reference", ""))),
    )


def _form(text: str, material: Material) -> tuple[float, list[str]]:
    """Length and repetition sanity: the part of fluency word counts can see."""
    words = _WORD_RE.findall(text.lower())
    content = _words(text)
    if len(words) < 3:
        return 0.1, [f"the response has only {len(words)} word(s)"]
    score, notes = 1.0, []
    if content and len(set(content)) / len(content) < 0.6:
        score -= 0.5
        notes.append("it repeats itself")
    if not text.rstrip().endswith((".", "!", "?", '"', ")")):
        score -= 0.2
        notes.append("it stops mid-sentence")
    if (
        "summar" in material.metric
        and material.source_length
        and len(content) > material.source_length
    ):
        score -= 0.4
        notes.append("it is longer than its source")
    return max(0.0, score), notes


def assess(text: str, material: Material) -> Assessment:
    """Quality in [0, 1] from the signals the metric cares about, with what was seen."""
    words = _words(text)
    if not words:
        return Assessment(0.0, ["the response has no words"])
    distinct = set(words)
    signals: dict[str, float] = {}
    notes: list[str] = []
    if material.prompt:
        signals["relevance"] = len(material.prompt & distinct) / len(material.prompt)
        notes.append(f"it addresses {signals['relevance']:.0%} of the request's key words")
    if material.source:
        signals["support"] = len(distinct & (material.source | material.prompt)) / len(distinct)
        wanted = max(1.0, 0.3 * len(material.source))
        signals["coverage"] = min(1.0, len(distinct & material.source) / wanted)
        notes.append(
            f"{signals['support']:.0%} of its words are supported by the source, and it "
            f"covers {signals['coverage']:.0%} of what a full account would"
        )
    if material.reference:
        signals["reference"] = len(material.reference & distinct) / len(material.reference)
        notes.append(f"it repeats {signals['reference']:.0%} of the reference answer's key words")
    form, form_notes = _form(text, material)
    signals["form"] = form
    notes += form_notes or ["it is readable"]
    chosen = _relevant_signals(material.metric, signals)
    return Assessment(fmean(chosen.values()), notes)


def _relevant_signals(metric: str, signals: dict[str, float]) -> dict[str, float]:
    wanted: tuple[str, ...]
    if "fluency" in metric or "coherence" in metric:
        wanted = ("form",)
    elif "grounded" in metric:
        wanted = ("support", "support", "form")
    elif "instruction" in metric:
        wanted = ("relevance", "form")
    elif "summar" in metric:
        wanted = ("support", "coverage", "relevance", "form")
    else:
        wanted = ("relevance", "support", "coverage", "reference", "form")
    chosen = {f"{name}{i}": signals[name] for i, name in enumerate(wanted) if name in signals}
    return chosen or {"form": signals["form"]}


def _rating(quality: float) -> int:
    return max(1, min(5, 1 + round(4 * quality)))


# ---- replies -----------------------------------------------------------------------------


def _pointwise(request: FakeRequest, blocks: dict[str, str]) -> str:
    rated_kind = "response" if "response" in blocks else list(blocks)[-1]
    material = _material(request, blocks, {rated_kind})
    result = assess(blocks[rated_kind], material)
    rating = _rating(result.quality)
    explanation = (
        f"{LABEL} Judging {material.metric}: {'; '.join(result.notes)}. "
        f"Overall quality {result.quality:.2f}, so the rating is {rating}."
    )
    return json.dumps({"explanation": explanation, "rating": rating})


def _pairwise(request: FakeRequest, blocks: dict[str, str]) -> str:
    material = _material(request, blocks, {"response_a", "response_b"})
    a = assess(blocks.get("response_a", ""), material)
    b = assess(blocks.get("response_b", ""), material)
    if abs(a.quality - b.quality) < _TIE_MARGIN:
        choice, verdict = "SAME", "They are about equally good."
    elif a.quality > b.quality:
        choice, verdict = "A", "Response A is better."
    else:
        choice, verdict = "B", "Response B is better."
    explanation = (
        f"{LABEL} Judging {material.metric}. Response A: {'; '.join(a.notes)} "
        f"(quality {a.quality:.2f}). Response B: {'; '.join(b.notes)} "
        f"(quality {b.quality:.2f}). {verdict}"
    )
    return json.dumps({"explanation": explanation, "pairwise_choice": choice})


def _sentence_count(guidance: str) -> int:
    text = guidance.lower()
    if re.search(r"thorough|detailed|comprehensive|in depth", text):
        return 4
    if re.search(r"single sentence|one sentence|as short as", text):
        return 1
    return 2


def _candidate_answer(request: FakeRequest) -> str:
    """A model under test answering from its material, given its guidance as the system
    instruction: the sentences that share the most words with the question, as many as the
    guidance asks for, in their original order."""
    message = read_message(request.user_text)
    question = set(_words(message.query))
    source = " ".join([*message.sources, _media_text(request.media)])
    sentences = [s.strip() for s in _SENTENCE_RE.split(source) if s.strip()]
    if not sentences:
        return f"I have no material to answer from. {LABEL}"
    ranked = sorted(
        range(len(sentences)), key=lambda i: (-len(question & set(_words(sentences[i]))), i)
    )
    chosen = sorted(ranked[: _sentence_count(request.system)])
    return " ".join(sentences[i] for i in chosen) + f" {LABEL}"
