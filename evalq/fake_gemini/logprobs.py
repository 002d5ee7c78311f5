"""Log probabilities as the Gemini API sends them (responseLogprobs, logprobs=N), and its 400
for the models that refuse them; kept apart from evalq's own table
(evalq.metrics.gecko.soft_models) so a mistake in one is caught by the other."""

from __future__ import annotations

import hashlib
import math
import re

from evalq.fake_gemini.protocol import FakeRequest, JsonObject

# Recorded refusing on the Gemini API (400 INVALID_ARGUMENT, "Logprobs is not enabled for
# models/<model>"): gemini-2.5-pro (googleapis/python-genai#1921), gemini-2.5-flash
# (python-genai's test_generate_content_config_zero_value.py), gemini-2.5-flash-lite
# (Vela-Research/think-reason-learn#34); gemini-2.0-flash gives them (python-genai#1921).
_REFUSING = ("gemini-2.5-pro", "gemini-2.5-flash")
_TOKEN_RE = re.compile(r"\s*\w+|\s*[^\w\s]+|\s+")
_ANSWER_VALUE = re.compile(r'(?<!\\)"answer"\s*:\s*"')
_OTHER = {"yes": "no", "no": "yes"}
# The log probability of every token that is not an answer: near certain, as recorded bodies
# show for a JSON reply's punctuation and keys.
CERTAIN_LOGPROB = -0.0001
_DEFAULT_TOP = 1  # the real API's top-candidate count when logprobs is not given


class LogprobsRefused(ValueError):
    """The real API's 400 INVALID_ARGUMENT for a model that gives no log probabilities."""


def check(request: FakeRequest) -> None:
    """Raise LogprobsRefused, with the real message, when the model refuses them."""
    name = request.model.rsplit("/", 1)[-1].lower()
    if request.response_logprobs and name.startswith(_REFUSING):
        raise LogprobsRefused(f"Logprobs is not enabled for models/{name}")


def tokens(text: str) -> list[str]:
    """The reply split as a tokenizer would: words and punctuation runs, each with the
    whitespace before it (as a recorded gemini-1.5-flash-002 reply shows: " do", " not");
    joined they give the text back."""
    return _TOKEN_RE.findall(text)


def answer_probability(text: str) -> float:
    """The probability the fake gives its own answer: a hash of the reply text, 0.55..0.97."""
    digest = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")
    return 0.55 + 0.42 * (digest % 1000) / 999


def _answer_candidates(text: str, answer: str) -> list[tuple[str, float]]:
    p = answer_probability(text)
    rest = 1.0 - p
    spread = [(answer, p), (_OTHER[answer], rest * 0.7), (answer.capitalize(), rest * 0.2)]
    return sorted(spread, key=lambda c: c[1], reverse=True)


def logprobs_fields(request: FakeRequest, text: str) -> JsonObject:
    """``avgLogprobs`` and ``logprobsResult`` for a candidate whose text is ``text``."""
    chosen, top = _steps(text, request.logprobs or _DEFAULT_TOP)
    return {
        "avgLogprobs": _mean(chosen),
        "logprobsResult": {"topCandidates": top, "chosenCandidates": chosen},
    }


def average_logprob(text: str) -> float:
    """``avgLogprobs`` alone, as Vertex AI puts it on every text candidate unasked."""
    return _mean(_steps(text, _DEFAULT_TOP)[0])


def _mean(chosen: list[JsonObject]) -> float:
    return sum(c["logProbability"] for c in chosen) / len(chosen) if chosen else 0.0


def _steps(text: str, top_n: int) -> tuple[list[JsonObject], list[JsonObject]]:
    """Per decoding step of ``text``: the token chosen, and the ``top_n`` candidates."""
    found = list(_ANSWER_VALUE.finditer(text))
    answer_at = found[-1].end() if found else -1
    chosen: list[JsonObject] = []
    top: list[JsonObject] = []
    at = 0
    for piece in tokens(text):
        word = piece.strip()
        if at + len(piece) - len(piece.lstrip()) == answer_at and word in _OTHER:
            ranked = _answer_candidates(text, word)
            candidates = [{"token": t, "logProbability": math.log(p)} for t, p in ranked]
            chosen.append(next(c for c in candidates if c["token"] == word))
        else:
            candidates = [{"token": piece, "logProbability": CERTAIN_LOGPROB}]
            chosen.append(candidates[0])
        top.append({"candidates": candidates[:top_n]})
        at += len(piece)
    return chosen, top
