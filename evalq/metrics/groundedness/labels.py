"""A judge's labels laid over our own split of the response: what counts for each sentence.

The score must rest on every sentence of the response, not on the sentences a judge chose to
label. So we split the response ourselves (evalq.metrics.groundedness.sentences), align the judge's labelled
sentences to ours (evalq.metrics.groundedness.label_alignment), and keep per sentence of ours the labels that fell
on it. Which sentences need a label: every one with a letter or a digit in it. A sentence that
makes no claim still needs one, because ``no_rad`` is how a judge says so; only a piece
without words ("—", "...") is exempt. A sentence no label covers is missing; the judge is asked
once more for the missing ones, and only labels that fall on them are taken from that reply.

When several labels fall on one sentence (a judge labels it twice, or cuts it into clauses
labelled apart) and they differ, the worse one counts, contradictory < unsupported <
supported, and a claim label beats ``no_rad``: a sentence one label calls unsupported is not
rescued by another calling it supported. Every such sentence is listed as a conflict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel

from evalq.metrics.groundedness.label_alignment import Aligner
from evalq.metrics.groundedness.parsing import Label
from evalq.metrics.groundedness.sentences import has_words, split_sentences

ExcerptStatus = Literal["exact", "fuzzy", "not_found", "missing", "not_needed"]
# Lower is worse; no_rad gives way to any claim label.
_RANK: dict[Label, int] = {"contradictory": 0, "unsupported": 1, "supported": 2, "no_rad": 3}


def worse_label(labels: list[Label]) -> Label:
    """The label that counts when several fall on one sentence."""
    return min(labels, key=_RANK.__getitem__)


class LabelledSentence(BaseModel):
    """A sentence as the judge labelled it, with our label after checking the judge's excerpt,
    and the sentences of the response it stands for."""

    sentence: str
    label: Label  # the label that counts
    judge_label: Label  # what the judge said
    rationale: str = ""
    excerpt: str | None = None
    excerpt_check: ExcerptStatus = "not_needed"
    excerpt_similarity: float | None = None
    note: str | None = None  # why the label was changed, or why it counts for nothing
    aligned_to: list[int] = []  # positions in the response's sentences
    asked_again: bool = False  # from the re-ask for missing sentences


# undecided: labelled by repeated samples (--samples) that still split at the maximum.
SentenceStatus = Literal[
    "labelled", "labelled_when_asked_again", "missing", "no_words", "undecided"
]


class ResponseSentence(BaseModel):
    """One sentence of the response as we split it, and the label that counts for it."""

    index: int
    sentence: str
    label: Label | None = None  # None: missing, or nothing to label
    status: SentenceStatus
    judge_labels: list[Label] = []  # every (checked) label that fell on it, in reply order
    labelled_by: list[int] = []  # positions in the judge's labelled sentences
    rationale: str = ""  # the rationale of the label that counts


class LabelConflict(BaseModel):
    index: int
    sentence: str
    labels: list[Label]  # the distinct labels, in reply order
    kept: Label


@dataclass
class Labelling:
    """The response's sentences and the judge's labels gathered for them so far."""

    sentences: list[str]
    items: list[LabelledSentence] = field(default_factory=list)
    asked_again: list[int] = field(default_factory=list)
    _aligner: Aligner = field(init=False)

    def __post_init__(self) -> None:
        self._aligner = Aligner(self.sentences)

    @classmethod
    def of(cls, response: str) -> Labelling:
        return cls(split_sentences(response))

    def needs_label(self, index: int) -> bool:
        return has_words(self.sentences[index])

    def add(self, items: list[LabelledSentence]) -> None:
        """The first reply's labels: each counts for the sentences it aligns to."""
        alignment = self._aligner.align([item.sentence for item in items])
        for item, targets in zip(items, alignment.targets, strict=True):
            item.aligned_to = targets
            if not targets:
                item.note = _join(item.note, "matches no sentence of the response; not counted")
            self.items.append(item)

    def add_asked_again(self, items: list[LabelledSentence], missing: list[int]) -> None:
        """The re-ask's labels, kept only where they fall on a sentence that was missing."""
        self.asked_again = list(missing)
        alignment = self._aligner.align([item.sentence for item in items], only=set(missing))
        for item, targets in zip(items, alignment.targets, strict=True):
            item.asked_again = True
            item.aligned_to = targets
            if not item.aligned_to:
                item.note = _join(
                    item.note, "asked again, but matches no missing sentence; not counted"
                )
            self.items.append(item)

    def missing(self) -> list[int]:
        """Sentences that need a label and that the labels so far don't cover."""
        return [
            i
            for i in range(len(self.sentences))
            if self.needs_label(i) and not self._aligner.covered(i)
        ]

    def response_sentences(self) -> list[ResponseSentence]:
        out = []
        missing = set(self.missing())
        for i, text in enumerate(self.sentences):
            by = [k for k, item in enumerate(self.items) if i in item.aligned_to]
            labels = [self.items[k].label for k in by]
            sentence = ResponseSentence(
                index=i, sentence=text, judge_labels=labels, labelled_by=by, status="missing"
            )
            if not self.needs_label(i):
                sentence.status = "no_words"
            elif i not in missing:
                kept = worse_label(labels)
                sentence.label = kept
                sentence.rationale = next(
                    self.items[k].rationale for k in by if self.items[k].label == kept
                )
                sentence.status = (
                    "labelled_when_asked_again"
                    if any(self.items[k].asked_again for k in by)
                    else "labelled"
                )
            out.append(sentence)
        return out

    def conflicts(self, sentences: list[ResponseSentence]) -> list[LabelConflict]:
        return [
            LabelConflict(
                index=s.index,
                sentence=s.sentence,
                labels=list(dict.fromkeys(s.judge_labels)),
                kept=s.label,
            )
            for s in sentences
            if s.label is not None and len(set(s.judge_labels)) > 1
        ]


def _join(note: str | None, more: str) -> str:
    return f"{note}; {more}" if note else more
