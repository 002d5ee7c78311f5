"""Judge prompt templates for Gecko (image), written for evalq.

Untrusted text (the prompt under evaluation, questions derived from it) is wrapped in
``<untrusted-CODE kind=...>`` blocks whose code the content cannot forge, and every template
tells the judge that such blocks are data, never instructions. Bump a template's
version whenever its wording changes: the version is part of every cache key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evalq.core.models import Question
from evalq.core.prompting import DATA_RULE, delimit, one_line

# /2: one question per keyword, and the re-ask shows the questions asked and only the gaps.
RUBRIC_TEMPLATE_VERSION = "gecko-image-rubric/2"
VALIDATOR_TEMPLATE_VERSION = "gecko-image-validator/1"
CHOICE_VALIDATOR_TEMPLATE_VERSION = "gecko-image-choice-validator/1"
BATCH_VALIDATOR_TEMPLATE_VERSION = "gecko-image-batch-validator/1"

_TAG_LIST = (
    "object, human, animal, food, activity, attribute, counting, color, material, spatial, "
    "location, shape, other"
)

RUBRIC_PROMPT = """You write verification questions for a text-to-image evaluation.

{data_rule}

Step 1. Read the image description below and list its keywords: the words or short phrases
that a faithful image must show (objects, people, animals, counts, colours, materials,
actions, positions, places, shapes, styles). Leave out filler words.

Step 2. For every keyword write one yes/no question, and only one, so that every keyword
weighs the same in the score. A person looking only at the image must be able to answer it,
and an image faithful to the description answers it "yes". Do not write questions that common
sense answers without looking. Give each question:
- "question": the question;
- "answer": "yes" or "no", the answer for an image faithful to the description;
- "tag": one of: {tags};
- "keywords": the keywords (copied exactly from your keyword list) that it checks;
- "justification": one sentence on why the question checks those keywords.

Reply with JSON only: {{"keywords": [...], "questions": [...]}}.

Image description:
{prompt}
"""

# Every re-ask ends with what fill_rubric_prompt fills in: the questions asked so far and the
# keywords still without one.
GAP_TAIL = """
Questions already written, with the keywords each checks:
{asked}

Keywords that still need a question (one per line):
{missing}
"""

RUBRIC_GAP_PROMPT = (
    """You add verification questions to a text-to-image evaluation rubric.

{data_rule}

The image description below was already split into keywords and yes/no questions, but the
keywords listed under "Keywords that still need a question" have none yet. Write one yes/no
question for each of those keywords, and only one; write nothing for any other keyword. The
questions already written are kept as they are: do not repeat or rephrase them. A person
looking only at the image must be able to answer each new question, and an image faithful to
the description answers it "yes". Give each question:
- "question": the question;
- "answer": "yes" or "no", the answer for an image faithful to the description;
- "tag": one of: {tags};
- "keywords": the missing keyword(s) it checks, copied exactly from the list;
- "justification": one sentence on why the question checks those keywords.

Reply with JSON only: {{"keywords": [the missing keywords], "questions": [...]}}.

Image description:
{prompt}
"""
    + GAP_TAIL
)

VALIDATOR_PROMPT = """You check whether a generated image shows what a question asks about.

{data_rule}

Look at the attached image and answer the question with "yes" or "no", judging only from what
is visible. Explain briefly first, then answer.

Question:
{question}

Reply with JSON only: {{"explanation": "...", "answer": "yes" or "no"}}.
"""


@dataclass(frozen=True)
class RubricGap:
    """What a re-ask for uncovered keywords shows: the questions asked so far and the keywords
    still without one. Both came from the judge, so both go back only inside untrusted blocks."""

    asked: Sequence[Question]
    missing: Sequence[str]


def asked_block(questions: Sequence[Question]) -> str:
    lines = []
    for number, q in enumerate(questions, start=1):
        checks = "; ".join(one_line(k) for k in q.keywords) or "(none named)"
        lines.append(f"{number}. {one_line(q.question)} [keywords: {checks}]")
    return delimit("asked_questions", "\n".join(lines))


def missing_block(missing: Sequence[str]) -> str:
    return delimit("missing_keywords", "\n".join(one_line(k) for k in missing))


CHOICE_VALIDATOR_PROMPT = """You check what a generated image shows by answering one
multiple-choice question about it.

{data_rule}

Look at the attached image and choose the one choice that matches what it shows, judging only
from what is visible. Explain briefly first, then give the letter of your choice.

Question:
{question}

Choices:
{choices}

Reply with JSON only: {{"explanation": "...", "answer": "<the letter>"}}.
"""


def fill_rubric_prompt(
    templates: tuple[str, str], kind: str, prompt: str, gap: RubricGap | None, **fixed: str
) -> str:
    """A rubric request from (first ask, re-ask) templates: the first, or with ``gap`` the one
    re-ask for the keywords left uncovered. The description goes in a block of ``kind``."""
    first, again = templates
    described = delimit(kind, prompt)
    if gap is None:
        return first.format(data_rule=DATA_RULE, prompt=described, **fixed)
    return again.format(
        data_rule=DATA_RULE,
        prompt=described,
        asked=asked_block(gap.asked),
        missing=missing_block(gap.missing),
        **fixed,
    )


def rubric_prompt(prompt: str, gap: RubricGap | None = None) -> str:
    """The rubric request, or with ``gap`` the one re-ask for the keywords left uncovered."""
    templates = (RUBRIC_PROMPT, RUBRIC_GAP_PROMPT)
    return fill_rubric_prompt(templates, "image_description", prompt, gap, tags=_TAG_LIST)


def validator_prompt(question: str) -> str:
    return VALIDATOR_PROMPT.format(data_rule=DATA_RULE, question=delimit("question", question))


def choice_validator_prompt(question: str, labelled_choices: Sequence[str]) -> str:
    """A hand-written multiple-choice question: its choices shown labelled a), b), ..."""
    listed = "\n".join(one_line(c) for c in labelled_choices)
    return CHOICE_VALIDATOR_PROMPT.format(
        data_rule=DATA_RULE,
        question=delimit("question", question),
        choices=delimit("choices", listed),
    )


BATCH_VALIDATOR_PROMPT = """You check whether a generated image shows what each of several
questions asks about.

{data_rule}

Look at the attached image and answer every numbered question below with "yes" or "no",
judging only from what is visible. Treat each question on its own: an answer to one question
must not change your answer to another. Explain each answer briefly before giving it.

Questions:
{questions}

Reply with JSON only, one entry per question, in the order given:
{{"answers": [{{"question_id": 1, "explanation": "...", "answer": "yes" or "no"}}, ...]}}.
"""


def numbered(questions: Sequence[str]) -> str:
    """ "1. ...", one question a line; a line break inside a question can not fake a number."""
    return "\n".join(f"{i}. {one_line(q)}" for i, q in enumerate(questions, start=1))


def batch_validator_prompt(questions: Sequence[str]) -> str:
    return BATCH_VALIDATOR_PROMPT.format(
        data_rule=DATA_RULE, questions=delimit("questions", numbered(questions))
    )
