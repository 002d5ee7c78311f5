"""Judge prompt templates for Gecko on videos: the typed-keyword rubric with multiple-choice
questions, its one re-ask for uncovered keywords, and the validator (one question, or a row's
questions at once). Untrusted text goes in blocks the judge is told are data (evalq.core.prompting).
Bump a template's version whenever its wording changes: the version is part of every cache key.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalq.core.models import Question
from evalq.core.parsing_choice import label_choices
from evalq.core.prompting import DATA_RULE, delimit, one_line
from evalq.metrics.gecko.prompts import GAP_TAIL, RubricGap, fill_rubric_prompt

VIDEO_RUBRIC_TEMPLATE_VERSION = "gecko-video-rubric/2"  # /2: the re-ask fills gaps only
VIDEO_VALIDATOR_TEMPLATE_VERSION = "gecko-video-validator/1"
VIDEO_BATCH_VALIDATOR_TEMPLATE_VERSION = "gecko-video-batch-validator/1"

_TYPE_LIST = (
    "entity, object, attribute, action, color, spatial relation, temporal relation, style, scene"
)

VIDEO_RUBRIC_PROMPT = """You write multiple-choice verification questions for a text-to-video
evaluation.

{data_rule}

Step 1. Read the video description below and list its keywords: the words or short phrases a
video faithful to it must show. Give each keyword a type, one of: {types}. What moves, which
way, what changes and in what order (actions and temporal relations) matter as much as what a
single frame shows.

Step 2. For every keyword write one multiple-choice question, and only one, that a person
watching only the video could answer, with exactly four choices labelled "a) ", "b) ", "c) ", "d) ": the one a
faithful video shows, and three plausible alternatives a video that got this detail wrong might
show instead (a similar thing, another colour, the opposite direction, another order of
events). Exactly one choice may be right; vary which letter it is. Give each question:
- "keywords": the keywords (copied exactly from your list) that it checks;
- "question": the question;
- "choices": the four labelled choices;
- "answer": the letter of the right choice;
- "justification": why that choice is right and why each of the other three is wrong.

Reply with JSON only:
{{"keywords": [{{"keyword": "...", "type": "..."}}], "questions": [...]}}.

Video description:
{prompt}
"""

VIDEO_RUBRIC_GAP_PROMPT = (
    """You add multiple-choice verification questions to a text-to-video
evaluation rubric.

{data_rule}

The video description below was already split into keywords and questions, but the keywords
listed under "Keywords that still need a question" have none yet. Write one multiple-choice
question for each of those keywords, and only one; write nothing for any other keyword. The
questions already written are kept as they are: do not repeat or rephrase them. Each question
must be answerable by a person watching only the video, with exactly four choices labelled
"a) ", "b) ", "c) ", "d) ": the one a faithful video shows and three plausible alternatives.
Give each question:
- "keywords": the missing keyword(s) it checks, copied exactly from the list;
- "question": the question;
- "choices": the four labelled choices;
- "answer": the letter of the right choice;
- "justification": why that choice is right and why each of the other three is wrong.

List the missing keywords again, each with a type, one of: {types}.

Reply with JSON only:
{{"keywords": [{{"keyword": "...", "type": "..."}}], "questions": [...]}}.

Video description:
{prompt}
"""
    + GAP_TAIL
)

VIDEO_VALIDATOR_PROMPT = """You watch a generated video and answer one multiple-choice question
about it.

{data_rule}

Watch the whole attached video. Some questions are about what happens over time (what moves,
which way, what changes, what comes first), so compare its beginning, middle and end. Choose the
one choice that best matches what the video shows, judging only from what is visible. Explain
briefly first, then give the letter of your choice.

Question:
{question}

Choices:
{choices}

Reply with JSON only: {{"explanation": "...", "answer": "<the letter>"}}.
"""

VIDEO_BATCH_VALIDATOR_PROMPT = """You watch a generated video and answer several multiple-choice
questions about it.

{data_rule}

Watch the whole attached video. Some questions are about what happens over time (what moves,
which way, what changes, what comes first), so compare its beginning, middle and end. For each
numbered question choose the one choice that best matches what the video shows, judging only
from what is visible and treating each question on its own. Explain each answer briefly first.

Questions, each followed by its choices:
{questions}

Reply with JSON only, one entry per question, in the order given:
{{"answers": [{{"question_id": 1, "explanation": "...", "answer": "<the letter>"}}, ...]}}.
"""


def video_rubric_prompt(prompt: str, gap: RubricGap | None = None) -> str:
    """The rubric request, or with ``gap`` the one re-ask for the keywords left uncovered."""
    templates = (VIDEO_RUBRIC_PROMPT, VIDEO_RUBRIC_GAP_PROMPT)
    return fill_rubric_prompt(templates, "video_description", prompt, gap, types=_TYPE_LIST)


def video_validator_prompt(question: str, choices: Sequence[str]) -> str:
    listed = "\n".join(one_line(c) for c in label_choices(choices))
    return VIDEO_VALIDATOR_PROMPT.format(
        data_rule=DATA_RULE,
        question=delimit("video_question", question),
        choices=delimit("choices", listed),
    )


def video_batch_validator_prompt(questions: Sequence[Question]) -> str:
    lines: list[str] = []
    for number, q in enumerate(questions, start=1):
        lines.append(f"{number}. {one_line(q.question)}")
        lines += [f"   {one_line(c)}" for c in label_choices(q.choices)]
    return VIDEO_BATCH_VALIDATOR_PROMPT.format(
        data_rule=DATA_RULE, questions=delimit("video_questions", "\n".join(lines))
    )
