"""Does a judge's excerpt really come from the context? A "supported" label is only as good as
the passage it quotes: an excerpt not found in the context (exactly, or with a few words
re-typed) turns the label into "unsupported"."""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from evalq.metrics.groundedness.labels import ExcerptStatus

# An excerpt of FUZZY_MIN_WORDS words or more may differ from the context in one word in ten
# (at least one word): judges re-type quotes. Shorter excerpts must match exactly.
FUZZY_SHARE = 0.1
FUZZY_MIN_WORDS = 8
_MAX_WINDOWS = 200
_WORD_RE = re.compile(r"[^\W_]+")
_PIECE_RE = re.compile(r"\.\.\.+|…|\n+|(?<=[.!?;])\s+")


def words(text: str) -> list[str]:
    """Lower-cased words, with punctuation, quotes and whitespace differences gone."""
    return _WORD_RE.findall(unicodedata.normalize("NFKC", text).casefold())


@dataclass(frozen=True)
class ExcerptCheck:
    status: ExcerptStatus
    similarity: float | None = None

    @property
    def found(self) -> bool:
        return self.status in ("exact", "fuzzy")


class ContextIndex:
    """A context prepared once per judge reply, so each excerpt costs one linear scan at most."""

    def __init__(self, context: str) -> None:
        self.words = words(context)
        self._joined = f" {' '.join(self.words)} "

    def check(self, excerpt: str | None) -> ExcerptCheck:
        """Is the excerpt in the context? Exact after normalising case and whitespace, else
        fuzzy (a few words changed, added or dropped). An excerpt that concatenates passages
        passes when each passage does."""
        if excerpt is None or not words(excerpt):
            return ExcerptCheck("missing")
        whole = self._one(words(excerpt))
        if whole.found:
            return whole
        pieces = [words(p) for p in _PIECE_RE.split(excerpt)]
        pieces = [p for p in pieces if p]
        if len(pieces) < 2:
            return whole
        checks = [self._one(p) for p in pieces]
        if all(c.found for c in checks):
            similarity = min(c.similarity or 0.0 for c in checks)
            status: ExcerptStatus = "exact" if all(c.status == "exact" for c in checks) else "fuzzy"
            return ExcerptCheck(status, similarity)
        return ExcerptCheck("not_found", whole.similarity)

    def _one(self, excerpt: list[str]) -> ExcerptCheck:
        if f" {' '.join(excerpt)} " in self._joined:
            return ExcerptCheck("exact", 1.0)
        n = len(excerpt)
        allowed = max(1, math.floor(FUZZY_SHARE * n)) if n >= FUZZY_MIN_WORDS else 0
        if allowed == 0:
            return ExcerptCheck("not_found")
        best = 0.0
        for window in self._windows(excerpt, n - allowed):
            matcher = difflib.SequenceMatcher(None, excerpt, window, autojunk=False)
            best = max(best, matcher.ratio())
        if best >= (n - allowed) / n - 1e-9:
            return ExcerptCheck("fuzzy", round(best, 3))
        return ExcerptCheck("not_found", round(best, 3))

    def _windows(self, excerpt: list[str], threshold: int) -> Iterable[list[str]]:
        """Windows of the excerpt's length holding at least ``threshold`` of its words (as a
        multiset), found with one sliding pass; the best few go on to the ordered check."""
        n, text = len(excerpt), self.words
        if not text:
            return []
        size = min(n, len(text))
        need = Counter(excerpt)
        have: Counter[str] = Counter()
        overlap = 0
        scored: list[tuple[int, int]] = []
        for end, word in enumerate(text):
            if word in need:
                have[word] += 1
                if have[word] <= need[word]:
                    overlap += 1
            start = end - size + 1
            if start > 0:
                gone = text[start - 1]
                if gone in need:
                    if have[gone] <= need[gone]:
                        overlap -= 1
                    have[gone] -= 1
            if start >= 0 and overlap >= threshold:
                scored.append((overlap, start))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [text[s : s + size] for _, s in scored[:_MAX_WINDOWS]]
