"""A Gecko rubric: written by the rubric judge (keywords, one question each, and one re-ask for the
keywords left without a question), given by the row, or both; and its name in the shared cache.

Bounded so that a runaway reply fails as parse_error instead of filling the plan and the
validator's fan-out.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from evalq.core.errors import JudgeError, UnparseableReply, must_propagate
from evalq.core.judge import Judge, JudgeReply, JudgeRequest
from evalq.core.models import (
    Coverage,
    Question,
    RowInput,
    Rubric,
)
from evalq.core.reply_schemas import RubricReply
from evalq.core.scoring import (
    checked_keywords,
    covers,
    missing_keywords,
)
from evalq.metrics.gecko.parsing import ParsedRubric, parse_image_rubric
from evalq.metrics.gecko.prompts import (
    RUBRIC_TEMPLATE_VERSION,
    RubricGap,
    rubric_prompt,
)


@dataclass(frozen=True)
class RubricSpec:
    """What differs between Gecko rubrics (image yes/no, video multiple choice): the prompt,
    the reply schema and how a reply is read. Coverage and the one re-ask are shared."""

    template_version: str
    schema: type[BaseModel]
    prompt: Callable[[str, RubricGap | None], str]  # (description, the gap to fill) -> prompt
    parse: Callable[[str], ParsedRubric]


IMAGE_RUBRIC = RubricSpec(
    template_version=RUBRIC_TEMPLATE_VERSION,
    schema=RubricReply,
    prompt=rubric_prompt,
    parse=parse_image_rubric,
)


def _ask_rubric(
    judge: Judge,
    prompt: str,
    gap: RubricGap | None,
    replies: list[JudgeReply],
    spec: RubricSpec,
) -> ParsedRubric:
    request = JudgeRequest(prompt=spec.prompt(prompt, gap), schema=spec.schema, role="rubric")
    reply = judge.generate(request)
    replies.append(reply)
    return _bounded(spec.parse(reply.text), reply.text)


# A rubric is stored in the row's plan and cached for every row with the same prompt, and each
# question costs a judge call per row: a reply beyond these bounds is no rubric (parse_error).
MAX_RUBRIC_QUESTIONS = 100
MAX_RUBRIC_KEYWORDS = 200
MAX_RUBRIC_CHARS = 100_000  # all its keywords, questions, answers, choices and justifications


def _bounded(parsed: ParsedRubric, text: str) -> ParsedRubric:
    keywords, questions = parsed
    chars = sum(map(len, keywords)) + sum(
        len(q.question)
        + len(q.expected)
        + len(q.justification)
        + sum(map(len, q.choices))
        + sum(map(len, q.keywords))
        for q in questions
    )
    for what, count, most in (
        ("questions", len(questions), MAX_RUBRIC_QUESTIONS),
        ("keywords", len(keywords), MAX_RUBRIC_KEYWORDS),
        ("characters of text", chars, MAX_RUBRIC_CHARS),
    ):
        if count > most:
            raise UnparseableReply(
                f"rubric reply has {count:,} {what}; at most {most:,}", raw=text[:4000]
            )
    return parsed


def _question_key(question: Question) -> tuple[str, tuple[str, ...]]:
    """Same question, same choices: a re-ask repeating it adds nothing."""
    return question.question.strip().lower(), tuple(c.strip().lower() for c in question.choices)


def gap_questions(
    keywords: Sequence[str], asked: Sequence[Question], missing: Sequence[str], more: list[Question]
) -> list[Question]:
    """From a re-ask's reply, the questions that cover a keyword still missing: one per missing
    keyword at most (a question checking two missing keywords covers both), none that repeats
    a question already asked or checks only keywords that already have one."""
    known = {_question_key(q) for q in asked}
    still = list(missing)
    added: list[Question] = []
    for question in more:
        if _question_key(question) in known:
            continue
        covered = [k for k in still if covers(question, k)]
        if not covered:
            continue
        added.append(question.model_copy(update={"keywords": checked_keywords(keywords, question)}))
        known.add(_question_key(question))
        still = [k for k in still if k not in covered]
    return added


def generate_rubric(
    judge: Judge, prompt: str, spec: RubricSpec = IMAGE_RUBRIC
) -> tuple[Rubric, list[JudgeReply]]:
    """Ask for keywords and one question per keyword; if some keywords go unasked, ask once
    more for those only, showing the questions already asked, and merge what fills the gaps."""
    replies: list[JudgeReply] = []
    keywords, questions = _ask_rubric(judge, prompt, None, replies, spec)
    questions = [
        q.model_copy(update={"keywords": checked_keywords(keywords, q)}) for q in questions
    ]
    missing = missing_keywords(keywords, questions)
    asked_again = False
    if missing:
        asked_again = True
        gap = RubricGap(asked=questions, missing=missing)
        try:
            _, more = _ask_rubric(judge, prompt, gap, replies, spec)
        except JudgeError as exc:
            if must_propagate(exc):
                raise
        else:
            new = gap_questions(keywords, questions, missing, more)
            questions += new[: max(0, MAX_RUBRIC_QUESTIONS - len(questions))]
            missing = missing_keywords(keywords, questions)
    rubric = Rubric(
        questions=questions,
        coverage=Coverage(keywords=keywords, missing=missing, asked_again=asked_again),
        template_version=spec.template_version,
        judge_model=judge.model,
        simulated=any(r.simulated for r in replies),
    )
    return rubric, replies


def dataset_rubric(row: RowInput) -> Rubric:
    """The row's own questions, as the seeds allow questions to be written by hand."""
    return Rubric(
        questions=[q.model_copy(update={"source": "dataset"}) for q in row.questions or []],
        coverage=Coverage(source="dataset"),
        template_version="dataset",
        judge_model="",
    )


def extend_rubric(rubric: Rubric, own: Sequence[Question]) -> Rubric:
    """A generated rubric with the row's own questions after its own; the keywords they
    check count towards coverage."""
    questions = rubric.questions + [q.model_copy(update={"source": "dataset"}) for q in own]
    coverage = rubric.coverage.model_copy(
        update={"missing": missing_keywords(rubric.coverage.missing, questions)}
    )
    return rubric.model_copy(update={"questions": questions, "coverage": coverage})


def read_rubric(stored: str) -> Rubric:
    return Rubric.model_validate_json(stored)


def rubric_cache_id(prompt: str, model: str, template_version: str) -> str:
    """A generated rubric's name in the shared cache: what it was made from, hashed. Where it
    lives (a Redis key on workers) is the runtime's business."""
    return hashlib.sha256(json.dumps([prompt, model, template_version]).encode()).hexdigest()
