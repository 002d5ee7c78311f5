"""The simulated judge's groundedness skill: it answers from the context and judges by word
overlap, so a faithful answer scores higher than an invented claim; a sentence with odds
(``[judge-odds supported=0.6 seed=2]``, or the context's) gets a label drawn as noisy.py does."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalq.fake_gemini.messages import read_message
from evalq.fake_gemini.prompt_grammar import (
    CONTEXT,
    QUERY,
    RESPONSE,
    UNLABELLED_SENTENCES,
    block,
    is_grounded_answer_guidance,
    is_plain,
    shows_field,
)
from evalq.fake_gemini.protocol import schema_properties
from evalq.fake_gemini.skills.noisy import draw, odds_in
from evalq.metrics.groundedness.parsing import GroundingReply, SentenceReply

if TYPE_CHECKING:
    from evalq.fake_gemini.protocol import FakeRequest, SeesImages

LABEL = "[simulated judge]"
CLOSING = "I hope this helps."
SUPPORTED_AT = 0.7  # share of a sentence's content words found in one context sentence
RELATED_AT = 0.5  # close enough that differing numbers or negation mean a contradiction
MAX_ANSWER_SENTENCES = 3
MIN_ANSWER_WORDS = 6

_STOP_TEXT = """
    a an the and or but if then so as of to in on at by for with from into onto about over
    under than that this these those there here it its it's they them their we us our you your
    i me my he she his her is are was were be been being am do does did done have has had having
    can could would should will shall may might must not no nor also just only very more most
    such what which who whom whose when where why how all any each every some both either
    neither other another own same too can't don't doesn't isn't aren't wasn't weren't
    list describe explain give tell please
"""
_STOP = frozenset(_STOP_TEXT.split())
_NEGATIONS = frozenset({"not", "no", "never", "none", "nor", "cannot", "without"})
_ABBREVIATIONS = frozenset({"al", "eg", "e.g", "ie", "i.e", "vs", "dr", "mr", "mrs", "ms"})
_POLITE_RE = re.compile(
    r"^\s*(i hope|hope this|thank|thanks|let me know|feel free|hello|hi\b|happy to help|"
    r"enjoy|please let|glad to|have a (great|nice|good))",
    re.IGNORECASE,
)
_URL_LINE_RE = re.compile(r"^\s*(https?://|www\.)\S+\s*$")
_TOKEN_RE = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_NUMBER_RE = re.compile(r"^\d+(?:[.,]\d+)*$")
_BOUNDARY_RE = re.compile(r"[.!?]+[\"')\]]*(?=\s)")


# ---- text ------------------------------------------------------------------------------------


def stem(word: str) -> str:
    """A crude stem, enough to match "emissions" with "emission" and "retailers" with "retail"."""
    w = word.lower()
    if w.endswith("ing") and len(w) > 5:
        w = w[:-3]
    elif w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("es") and len(w) > 4:
        w = w[:-2]
    elif w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        w = w[:-1]
    elif w.endswith("ed") and len(w) > 4:
        w = w[:-2]
    return w[:6]


def tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN_RE.findall(text)]


def content(text: str) -> set[str]:
    """Stems of the words that carry content (numbers included)."""
    return {stem(t) for t in tokens(text) if t not in _STOP}


def numbers(text: str) -> set[str]:
    return {t.replace(",", "") for t in tokens(text) if _NUMBER_RE.match(t)}


def negated(text: str) -> bool:
    return any(t in _NEGATIONS or t.endswith("n't") for t in tokens(text))


@dataclass(frozen=True)
class Span:
    text: str  # exactly as in the source, line breaks included
    stems: frozenset[str]
    words: int


def split_sentences(text: str) -> list[Span]:
    """Sentences with their original text; abbreviations ("et al.", "S. 4043") don't end one,
    and a line holding only a URL stands alone."""
    spans: list[Span] = []
    paragraph: list[str] = []

    def flush() -> None:
        block = "\n".join(paragraph)
        paragraph.clear()
        start = 0
        for m in _BOUNDARY_RE.finditer(block):
            before = block[start : m.start()].rsplit(None, 1)
            last = before[-1].lower().strip("(\"'") if before else ""
            if last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha()):
                continue
            _add(spans, block[start : m.end()])
            start = m.end()
        _add(spans, block[start:])

    for line in text.splitlines():
        if _URL_LINE_RE.match(line):
            flush()
            _add(spans, line)
        else:
            paragraph.append(line)
    flush()
    return spans


def _add(spans: list[Span], piece: str) -> None:
    piece = piece.strip()
    if piece:
        spans.append(Span(piece, frozenset(content(piece)), len(tokens(piece))))


# ---- answering -------------------------------------------------------------------------------


def write_answer(query: str, context: str) -> str:
    """An extractive answer: the context sentences sharing most content words with the query."""
    wanted = content(query)
    ranked = sorted(
        (
            (len(span.stems & wanted), i, span)
            for i, span in enumerate(split_sentences(context))
            if span.words >= MIN_ANSWER_WORDS
        ),
        key=lambda item: (-item[0], item[1]),
    )
    chosen = [(i, span) for shared, i, span in ranked[:MAX_ANSWER_SENTENCES] if shared > 0]
    if not chosen:
        return f"{LABEL} The context does not say."
    body = " ".join(" ".join(span.text.split()) for _, span in sorted(chosen, key=lambda c: c[0]))
    return f"{LABEL} {body} {CLOSING}"


# ---- judging ---------------------------------------------------------------------------------


def label_sentence(sentence: Span, context: list[Span]) -> SentenceReply:
    if _POLITE_RE.match(sentence.text) or not sentence.stems:
        return SentenceReply(
            sentence=sentence.text,
            label="no_rad",
            rationale=f"{LABEL} A courtesy that makes no claim about the context.",
        )
    best, share = None, 0.0
    for span in context:
        found = len(sentence.stems & span.stems) / len(sentence.stems)
        if found > share:
            best, share = span, found
    seen = f"{round(share * len(sentence.stems))} of {len(sentence.stems)} content words"
    if best is not None and share >= RELATED_AT:
        said, source = numbers(sentence.text), numbers(best.text)
        if (said and source and not said <= source) or negated(sentence.text) != negated(best.text):
            return SentenceReply(
                sentence=sentence.text,
                label="contradictory",
                rationale=f"{LABEL} {seen} match this passage, but its numbers or negation differ.",
                excerpt=best.text,
            )
    if best is not None and share >= SUPPORTED_AT:
        return SentenceReply(
            sentence=sentence.text,
            label="supported",
            rationale=f"{LABEL} {seen} appear in this passage of the context.",
            excerpt=best.text,
        )
    return SentenceReply(
        sentence=sentence.text,
        label="unsupported",
        rationale=f"{LABEL} Only {seen} appear in any one passage of the context.",
    )


_ODDS_MARK = re.compile(r"\s*\[judge-odds\s+[^\]]*\]")


def drawn_label(
    sentence: Span, passages: list[Span], odds: tuple[dict[str, float], int], sample: int | None
) -> SentenceReply:
    """A sentence's label drawn from its odds (fixed by its text and the sample's seed); a
    drawn `supported` or `contradictory` quotes the context passage closest to it."""
    chances, seed = odds
    chances = {**chances, "unsupported": max(0.0, 1.0 - sum(chances.values()))}
    label = draw(chances, seed, sentence.text, sample)
    best = max(passages, key=lambda span: len(sentence.stems & span.stems), default=None)
    needs = label in ("supported", "contradictory") and best is not None
    return SentenceReply(
        sentence=sentence.text,
        label=label,
        rationale=f"{LABEL} A noisy judge: this label was drawn from the sentence's odds.",
        excerpt=best.text if needs and best is not None else None,
    )


def judge_reply(
    query: str,
    context: str,
    response: str,
    only: str | None = None,
    sample: int | None = None,
) -> GroundingReply:
    """Labels for every sentence of the response, or, asked again, for the sentences in
    ``only`` (one per line). A sentence is quoted as written, our "[simulated judge]" marker
    included, and judged without the marker; one with odds (its own or the context's) gets a
    label drawn with the ``sample`` seed."""
    passages = split_sentences(context)
    context_odds = odds_in(context)
    sentences: list[SentenceReply] = []
    answered: set[str] = set()  # the response's own words
    quoted: set[str] = set()  # the words of the passages its supported sentences quote
    for span in split_sentences(response if only is None else only):
        bare = span.text.replace(LABEL, " ").strip()
        if not bare:
            sentences.append(
                SentenceReply(
                    sentence=span.text, label="no_rad", rationale=f"{LABEL} Only a marker."
                )
            )
            continue
        odds = odds_in(bare) or context_odds
        bare = " ".join(_ODDS_MARK.sub("", bare).split())  # the sentence as its odds key
        judged = Span(bare, frozenset(content(bare)), len(tokens(bare)))
        if odds is not None:
            labelled = drawn_label(judged, passages, odds, sample)
        else:
            labelled = label_sentence(judged, passages)
        sentences.append(labelled.model_copy(update={"sentence": span.text}))
        if labelled.label != "no_rad":
            answered |= content(bare)
        if labelled.label == "supported" and labelled.excerpt:
            quoted |= content(labelled.excerpt)
    asked = content(query)
    shared = sorted(asked & answered)
    through = sorted(asked & quoted - answered)  # "Paris." from "Paris is the capital of France."
    eligible = bool(asked) and len(shared) + len(through) >= max(1, round(0.25 * len(asked)))
    if not eligible:
        reason = f"{LABEL} The response does not take up the request's terms."
    elif shared:
        reason = f"{LABEL} The response takes up the request's terms ({', '.join(shared)})."
    else:
        reason = (
            f"{LABEL} The response answers from the passage about the request's terms "
            f"({', '.join(through)})."
        )
    return GroundingReply(eligibility_rationale=reason, eligible=eligible, sentences=sentences)


def _seed_form(reply: GroundingReply) -> str:
    """Without a schema we answer as judges prompted the FACTS way do: an array in a fence."""
    items = [s.model_dump() for s in reply.sentences]
    return "Here is my analysis:\n```json\n" + json.dumps(items, indent=1) + "\n```"


def answer(request: FakeRequest, judge: SeesImages) -> str | None:
    text = request.text
    if request.response_schema is None and is_plain(text):
        return _answer_as_model_under_test(request)
    context = block(text, CONTEXT)
    query = block(text, QUERY)
    response = block(text, RESPONSE)
    if context is None or query is None or response is None:
        return None
    properties = schema_properties(request.response_schema)
    if "sentences" in properties or (not properties and shows_field(text, "no_rad")):
        # Asked again for sentences left out, we label just those.
        only = block(text, UNLABELLED_SENTENCES)
        reply = judge_reply(query, context, response, only, request.seed)
        return reply.model_dump_json() if properties else _seed_form(reply)
    return None


def _answer_as_model_under_test(request: FakeRequest) -> str | None:
    """Our answer guidance, or none at all (a user's template), and a context to answer from;
    other guidance (a rank candidate's) is another skill's."""
    if request.system and not is_grounded_answer_guidance(request.system):
        return None
    message = read_message(request.user_text)
    if not message.sources:
        return None
    return write_answer(message.query, message.source)
