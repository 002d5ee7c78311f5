"""Fingerprints of question sets: which questions a row was scored on, and a job's rows together.
A rerun after the rubric cache expired writes new questions, and two rows scored on different
questions are not alike: the fingerprints say so."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence

from evalq.core.models import Question, RowResult

FINGERPRINT_HEX = 16  # 64 bits of sha256, as hex: short enough to read, long enough to trust


def _digest(material: object) -> str:
    text = json.dumps(material, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:FINGERPRINT_HEX]


def question_form(question: Question) -> list[object]:
    """What of a question the fingerprint covers: what the validator is asked and expected to
    answer (text, expected answer, choices, tag), not its keywords, justification or source, so
    a generated question given back by hand keeps its fingerprint. Spaces are normalised the way
    the dataset loader reads a hand-written question (evalq.core.row_questions)."""
    form: list[object] = [
        " ".join(question.question.split()),
        question.expected.strip().lower(),
        [" ".join(choice.split()) for choice in question.choices],
        question.tag.strip().lower(),
    ]
    # An importance other than the default weighs in the score, so it is part of the form.
    return form + ([question.weight] if question.weight != 1.0 else [])


def question_set_fingerprint(questions: Sequence[Question]) -> str:
    """The fingerprint of the questions a row is scored on (sha256, short hex), taken as a set:
    their order does not change it, a question asked twice does."""
    return _digest(sorted((question_form(q) for q in questions), key=json.dumps))


def job_question_set(rows: Iterable[RowResult]) -> str | None:
    """A fingerprint of every row's question set together: a digest over the distinct (prompt,
    row fingerprint) pairs, sorted, so neither the rows' order nor a job's candidates (cells of
    one prompt share its questions) change it. None when no row has a fingerprint."""
    pairs = {(r.prompt, r.question_set) for r in rows if r.question_set is not None}
    if not pairs:
        return None
    return _digest(sorted([prompt, fingerprint] for prompt, fingerprint in pairs))
