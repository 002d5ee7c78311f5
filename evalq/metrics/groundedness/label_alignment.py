"""Which of our sentences each of a judge's labelled sentences stands for.

A judge copies the sentences it labels, but not always faithfully: it changes case, quotes and
punctuation, re-types a word or two, joins two sentences into one, or cuts one into clauses.
Each judge sentence is therefore matched on words, not characters:
- words are compared after Unicode normalisation and case folding, with a final "s" dropped
  ("Bananas cure" matches "banana cures"); punctuation, quotes and spacing are ignored;
- a judge sentence is placed on the run of one to ``MAX_RUN`` consecutive response sentences it
  resembles most (difflib's ratio over the words, so order counts), and must find at least
  ``FOUND_SHARE`` of its words there; otherwise it stands for nothing in the response;
- within that run it labels each sentence with which it shares at least ``TOUCH_SHARE`` of the
  shorter one's words: a merged judge sentence labels both of ours, a clause labels the one it
  came from;
- a response sentence counts as labelled when the judge sentences labelling it hold at least
  ``COVER_SHARE`` of its words. Labelling only "Apples are red" in "Apples are red fruits that
  cure cancer" leaves that sentence unlabelled.
On ties (a response that says "Yes." twice) a sentence not yet labelled wins, then the one
nearest after the previous judge sentence, as judges go through a response in order.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

MAX_RUN = 4
FOUND_SHARE = 0.6
TOUCH_SHARE = 0.5
COVER_SHARE = 0.7
_MAX_STARTS = 8  # the candidate starting sentences tried per judge sentence, most words shared
_WORD_RE = re.compile(r"[^\W_]+")


def fold(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def word_list(text: str) -> list[str]:
    """Words for matching: case, punctuation, quotes and white space differences gone."""
    return [fold(w) for w in _WORD_RE.findall(unicodedata.normalize("NFKC", text).casefold())]


@dataclass(frozen=True)
class Alignment:
    """``targets[k]``: the response sentences judge sentence k labels (empty: none of them)."""

    targets: list[list[int]]


def _overlap(a: Counter[str], b: Counter[str]) -> int:
    """Words in common, counted with multiplicity (Counter's & without building a Counter)."""
    if len(a) > len(b):
        a, b = b, a
    return sum(min(count, b[word]) for word, count in a.items() if word in b)


class Aligner:
    """The response's sentences prepared once; judge replies (the first and the re-ask) are
    aligned against them, and coverage accumulates over both."""

    def __init__(self, sentences: Sequence[str]) -> None:
        self.sentences = list(sentences)
        self.words = [word_list(s) for s in self.sentences]
        self.bags = [Counter(w) for w in self.words]
        self.covered_words: list[Counter[str]] = [Counter() for _ in self.sentences]
        self._covered = [False for _ in self.sentences]
        self._cursor = 0

    def covered(self, index: int) -> bool:
        """Do the judge sentences aligned to this one so far hold enough of its words?"""
        return self._covered[index]

    def coverage(self, index: int) -> float:
        size = len(self.words[index])
        return _overlap(self.covered_words[index], self.bags[index]) / size if size else 0.0

    def align(
        self, judge_sentences: Sequence[str], only: Collection[int] | None = None
    ) -> Alignment:
        """Place each judge sentence, in order, and record what it covers; with ``only``, a
        judge sentence labels (and covers) none but those response sentences."""
        self._cursor = 0
        return Alignment(targets=[self._place(word_list(j), only) for j in judge_sentences])

    def _place(self, judged: list[str], only: Collection[int] | None) -> list[int]:
        if not judged:
            return []
        bag = Counter(judged)
        # Most words shared first; then a sentence not yet labelled, of about the same length,
        # at or after the previous judge sentence's place.
        ranked = sorted(
            (
                (
                    -shared,
                    self.covered(i),
                    abs(len(self.words[i]) - len(judged)),
                    i < self._cursor,
                    i,
                )
                for i, b in enumerate(self.bags)
                if (shared := _overlap(bag, b))
            )
        )
        best: tuple[tuple[float, bool, bool, int], int, int] | None = None
        matcher = difflib.SequenceMatcher(None, autojunk=False)
        matcher.set_seq2(judged)  # difflib caches what it learns about the second sequence
        for *_, first in ranked[:_MAX_STARTS]:
            run: list[str] = []
            for last in range(first, min(len(self.words), first + MAX_RUN)):
                if last > first and not _overlap(bag, self.bags[last]):
                    break  # a sentence sharing no word can't improve the match
                run = run + self.words[last]
                matcher.set_seq1(run)
                if best is not None and matcher.quick_ratio() < best[0][0]:
                    continue  # an upper bound already below the best match
                ratio = matcher.ratio()
                fresh = not all(self.covered(i) for i in range(first, last + 1))
                key = (round(ratio, 9), fresh, first >= self._cursor, -first)
                if best is None or key > best[0]:
                    best = (key, first, last)
        if best is None:
            return []
        _, first, last = best
        run_bag: Counter[str] = Counter()
        for i in range(first, last + 1):
            run_bag += self.bags[i]
        if _overlap(bag, run_bag) < FOUND_SHARE * len(judged):
            return []
        targets = []
        for i in range(first, last + 1):
            common = bag & self.bags[i]
            if sum(common.values()) >= TOUCH_SHARE * min(len(judged), len(self.words[i])):
                targets.append(i)
        if targets:
            self._cursor = targets[-1]
        kept = [i for i in targets if only is None or i in only]
        for i in kept:
            self.covered_words[i] |= bag & self.bags[i]
            held = _overlap(self.covered_words[i], self.bags[i])
            self._covered[i] = held >= COVER_SHARE * len(self.words[i])
        return kept
