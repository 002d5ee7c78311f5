"""Which questions (a Gecko question, a rubric test) two sides answer differently across prompts:
"B fails 'The response gives a date.' on 14 prompts where A passes" says more than a mean."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evalq.comparisons.paired_rows import PairedRow


@dataclass(frozen=True)
class QuestionDifference:
    question: str
    tag: str
    a_only: int  # prompts where A answered as expected and B did not
    b_only: int  # and the other way round
    both_scored: int  # prompts where both sides scored it

    def as_dict(self) -> dict[str, object]:
        return {
            "question": self.question,
            "tag": self.tag,
            "a_only": self.a_only,
            "b_only": self.b_only,
            "both_scored": self.both_scored,
        }


def question_differences(rows: Sequence[PairedRow], limit: int = 10) -> list[QuestionDifference]:
    """Per question text, on how many prompts only one side met it, most differing first;
    a question unscored on either side is left out, as in the scores."""
    counts: dict[tuple[str, str], list[int]] = {}
    for row in rows:
        qa = {q.question: q for q in (row.row_a.questions if row.row_a else [])}
        qb = {q.question: q for q in (row.row_b.questions if row.row_b else [])}
        for text in qa.keys() & qb.keys():
            a, b = qa[text].result, qb[text].result
            if a is None or b is None:
                continue
            tally = counts.setdefault((text, qa[text].tag), [0, 0, 0])
            tally[0] += int(a > b)
            tally[1] += int(b > a)
            tally[2] += 1
    found = [
        QuestionDifference(text, tag, a_only, b_only, both)
        for (text, tag), (a_only, b_only, both) in counts.items()
        if a_only or b_only
    ]
    found.sort(key=lambda d: (-(d.a_only + d.b_only), d.question))
    return found[:limit]
