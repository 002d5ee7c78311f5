"""Multiple-choice questions for the Gecko image validator.

Generated image rubrics are yes/no, but the seed lets questions be written by hand, and a
hand-written question may offer choices ("What colour is the circle?" red / blue / green). The
validator must then show those choices and read a letter back; asked as yes/no, such a question
could never be answered as expected and would score a silent 0. A row's yes/no questions keep
their own prompt; a batch that mixes both kinds says, per question, which kind of answer it
wants, and every answer is read by the parser of its own question's kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from evalq.core.models import Question
from evalq.core.parsing_choice import label_choices, parse_letter
from evalq.core.prompting import DATA_RULE, delimit, one_line
from evalq.metrics.gecko.parsing import parse_yes_no

MIXED_BATCH_VALIDATOR_TEMPLATE_VERSION = "gecko-image-mixed-batch-validator/1"

# At most ten choices (row_questions.MAX_QUESTION_CHOICES); a letter beyond a question's own choices
# is refused when the reply is read.
ChoiceLetter = Literal["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]


class ImageChoiceReply(BaseModel):
    """Schema for one multiple-choice image question: reasoning first, then the letter."""

    explanation: str
    answer: ChoiceLetter


class MixedBatchItem(BaseModel):
    question_id: int
    explanation: str
    answer: str  # "yes" / "no", or a letter, as each question asks


class MixedBatchReply(BaseModel):
    """Schema for a batch mixing yes/no and multiple-choice questions."""

    answers: list[MixedBatchItem]


MIXED_BATCH_VALIDATOR_PROMPT = """You check whether a generated image shows what each of several
questions asks about.

{data_rule}

Look at the attached image and answer every numbered question below, judging only from what
is visible. A question marked "(yes or no)" is answered "yes" or "no"; a question followed by
lettered choices is answered with the letter of the one choice that matches the image. Treat
each question on its own: an answer to one question must not change your answer to another.
Explain each answer briefly before giving it.

Questions:
{questions}

Reply with JSON only, one entry per question, in the order given:
{{"answers": [{{"question_id": 1, "explanation": "...", "answer": "yes", "no" or the letter}},
...]}}.
"""


def is_yes_no(question: Question) -> bool:
    """A yes/no question (every generated image question; a row's own without choices)."""
    return sorted(c.strip().lower() for c in question.choices) == ["no", "yes"]


def mixed_batch_validator_prompt(questions: Sequence[Question]) -> str:
    lines: list[str] = []
    for number, q in enumerate(questions, start=1):
        if is_yes_no(q):
            lines.append(f"{number}. {one_line(q.question)} (yes or no)")
        else:
            lines.append(f"{number}. {one_line(q.question)}")
            lines += [f"   {one_line(c)}" for c in label_choices(q.choices)]
    return MIXED_BATCH_VALIDATOR_PROMPT.format(
        data_rule=DATA_RULE, questions=delimit("questions", "\n".join(lines))
    )


def parse_answer(text: str, question: Question) -> str:
    """yes/no for a yes/no question, a letter among its own choices otherwise."""
    if is_yes_no(question):
        return parse_yes_no(text)
    return parse_letter(text, question.choices)
