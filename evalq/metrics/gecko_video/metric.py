"""Gecko for text-to-video: typed keywords, one multiple-choice question per keyword, validated
by a judge that watches the video.

Same flow and scoring as Gecko for images (evalq.metrics.gecko.metric): rubric per prompt with the coverage
check and one re-ask, a validator per question or per row (--validator batched), unscored
never 0. What differs is the question form: four labelled choices and a letter, because a
video's details (which way something moves, what happens first) are better asked as "which of
these" than as yes/no, and because wrong-but-plausible choices make a lazy "yes" impossible.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from evalq.core.dataset import parse_questions
from evalq.core.errors import UnparseableReply
from evalq.core.judge import JudgeRequest, MediaPart
from evalq.core.models import Question
from evalq.core.parsing_choice import choice_text, label_choices, letters_for, parse_letter
from evalq.core.prompting import DATA_RULE, delimit, one_line
from evalq.core.replies import extract_json
from evalq.metrics.gecko.metric import GeckoMetric, ParsedRubric, RubricSpec, ValidatorSpec
from evalq.metrics.gecko.prompts import RubricGap, asked_block, missing_block

VIDEO_RUBRIC_TEMPLATE_VERSION = "gecko-video-rubric/2"  # /2: the re-ask fills gaps only
VIDEO_VALIDATOR_TEMPLATE_VERSION = "gecko-video-validator/1"
VIDEO_BATCH_VALIDATOR_TEMPLATE_VERSION = "gecko-video-batch-validator/1"

KeywordType = Literal[
    "entity",
    "object",
    "attribute",
    "action",
    "color",
    "spatial relation",
    "temporal relation",
    "style",
    "scene",
    "other",
]
KEYWORD_TYPES: tuple[str, ...] = KeywordType.__args__  # type: ignore[attr-defined]
Letter = Literal["a", "b", "c", "d"]
MAX_CHOICES = 4
MIN_CHOICES = 2

# Types judges write that mean one of ours.
_TYPE_ALIASES = {
    "colour": "color",
    "spatial": "spatial relation",
    "spatial_relation": "spatial relation",
    "location": "spatial relation",
    "position": "spatial relation",
    "temporal": "temporal relation",
    "temporal_relation": "temporal relation",
    "time": "temporal relation",
    "motion": "action",
    "activity": "action",
    "movement": "action",
    "human": "entity",
    "person": "entity",
    "animal": "entity",
    "character": "entity",
    "counting": "attribute",
    "count": "attribute",
    "size": "attribute",
    "shape": "attribute",
    "material": "attribute",
    "background": "scene",
    "setting": "scene",
    "place": "scene",
    "camera": "style",
    "perspective": "style",
    "vibe": "style",
    "mood": "style",
}


# ---- reply schemas ---------------------------------------------------------------------------


class VideoKeywordReply(BaseModel):
    keyword: str
    type: KeywordType


class VideoQuestionReply(BaseModel):
    keywords: list[str]
    question: str
    choices: list[str]
    answer: Letter
    justification: str


class VideoRubricReply(BaseModel):
    """Schema for video rubric generation: typed keywords, one lettered question per keyword."""

    keywords: list[VideoKeywordReply]
    questions: list[VideoQuestionReply]


class ChoiceVerdictReply(BaseModel):
    """Schema for the video validator: reasoning first, then the letter."""

    explanation: str
    answer: Letter


class BatchChoiceItem(BaseModel):
    question_id: int
    explanation: str
    answer: Letter


class BatchChoiceReply(BaseModel):
    """Schema for the batched video validator: one letter per numbered question."""

    answers: list[BatchChoiceItem]


# ---- prompts ---------------------------------------------------------------------------------

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

VIDEO_RUBRIC_GAP_PROMPT = """You add multiple-choice verification questions to a text-to-video
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

Questions already written, with the keywords each checks:
{asked}

Keywords that still need a question (one per line):
{missing}
"""

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
    if gap is None:
        return VIDEO_RUBRIC_PROMPT.format(
            data_rule=DATA_RULE, types=_TYPE_LIST, prompt=delimit("video_description", prompt)
        )
    return VIDEO_RUBRIC_GAP_PROMPT.format(
        data_rule=DATA_RULE,
        types=_TYPE_LIST,
        prompt=delimit("video_description", prompt),
        asked=asked_block(gap.asked),
        missing=missing_block(gap.missing),
    )


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


# ---- reading rubric replies ------------------------------------------------------------------


def keyword_type(value: Any) -> str:
    """One of our types; the usual synonyms mapped, anything else "other"."""
    if not isinstance(value, str):
        return "other"
    text = value.strip().lower().replace("-", " ")
    text = _TYPE_ALIASES.get(text, _TYPE_ALIASES.get(text.replace(" ", "_"), text))
    return text if text in KEYWORD_TYPES else "other"


_SEED_KEYWORD_RE = re.compile(r"(?:\{(?P<id>\d+)\})?\s*\[(?P<body>[^\]]+)\]")


def _keywords(value: Any) -> list[tuple[int, str, str]]:
    """(id, keyword, type) from a list of objects, "[text, type, weight]" strings, or the
    "{1}[text, type, 1.0] ..." string the Gecko papers use; ids are 1-based."""
    items: list[Any]
    if isinstance(value, str):
        items = [m.group(0) for m in _SEED_KEYWORD_RE.finditer(value)] or [value]
    elif isinstance(value, list):
        items = value
    else:
        return []
    out: list[tuple[int, str, Any]] = []
    for position, item in enumerate(items, start=1):
        if isinstance(item, dict):
            text = item.get("keyword", item.get("text", item.get("name")))
            kind = item.get("type", item.get("tag"))
            number = item.get("id", position)
        elif isinstance(item, str) and (m := _SEED_KEYWORD_RE.fullmatch(item.strip())):
            text, kind, *_ = [*(p.strip() for p in m.group("body").split(",")), None]
            number = int(m.group("id")) if m.group("id") else position
        else:
            text, kind, number = item, None, position
        if isinstance(text, str) and text.strip():
            out.append((int(number) if isinstance(number, int) else position, text.strip(), kind))
    return [(n, text, keyword_type(kind)) for n, text, kind in out]


def _question_keywords(item: dict[str, Any], by_id: dict[int, str]) -> list[str]:
    named = item.get("keywords", item.get("keyword"))
    if isinstance(named, str):
        named = [named]
    if isinstance(named, list) and all(isinstance(k, str) for k in named) and named:
        return [str(k) for k in named]
    ids: list[int] = []
    for key in ("keyword_ids", "keyword_id", "keywords"):
        value = item.get(key)
        if isinstance(value, int):
            ids.append(value)
        elif isinstance(value, list):
            ids += [v for v in value if isinstance(v, int)]
    if not ids:  # the papers' style: "... ({3}) ..." in the justification
        ids = [int(n) for n in re.findall(r"\{(\d+)\}", str(item.get("justification", "")))]
    return [by_id[i] for i in ids if i in by_id]


def _checked_choices(choices: Any) -> list[str]:
    """Two to four distinct, non-empty choices, labelled a) .. d); else ValueError."""
    if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        raise ValueError("choices must be a list of strings")
    if not MIN_CHOICES <= len(choices) <= MAX_CHOICES:
        raise ValueError(f"needs {MIN_CHOICES} to {MAX_CHOICES} choices, got {len(choices)}")
    texts = [choice_text(c).lower() for c in choices]
    if not all(texts) or len(set(texts)) != len(texts):
        raise ValueError("choices must be distinct and non-empty")
    return label_choices(choices)


def _question(item: Any, by_id: dict[int, str], types: dict[str, str]) -> Question:
    if not isinstance(item, dict):
        raise ValueError("a question must be an object")
    text = item.get("question")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("question text missing")
    choices = _checked_choices(item.get("choices"))
    answer = item.get("answer")
    try:
        letter = parse_letter(str(answer), choices) if answer is not None else None
    except UnparseableReply:
        letter = None
    if letter is None:
        raise ValueError(f"answer {answer!r} is not one of the letters {letters_for(choices)}")
    keywords = _question_keywords(item, by_id)
    tag = keyword_type(item.get("type", item.get("tag")))
    if tag == "other" and keywords:
        tag = types.get(keywords[0].strip().lower(), "other")
    return Question(
        question=text.strip(),
        expected=letter,
        tag=tag,
        choices=choices,
        keywords=keywords,
        justification=str(item.get("justification", "")),
    )


def parse_video_rubric(text: str) -> ParsedRubric:
    """Keywords and multiple-choice questions from a rubric reply; a malformed question is
    dropped (its keyword then counts as uncovered and is asked again), none at all is an error."""
    data = extract_json(text)
    if not isinstance(data, dict):
        raise UnparseableReply("rubric reply is not a JSON object", raw=text[:4000])
    keywords = _keywords(data.get("keywords"))
    by_id = {n: k for n, k, _ in keywords}
    types = {k.lower(): t for _, k, t in keywords}
    items = data.get("questions", data.get("qas"))
    if not isinstance(items, list) or not items:
        raise UnparseableReply("rubric reply has no questions", raw=text[:4000])
    questions: list[Question] = []
    problems: list[str] = []
    for index, item in enumerate(items):
        try:
            questions.append(_question(item, by_id, types))
        except (ValueError, ValidationError) as exc:
            problems.append(f"questions[{index}]: {exc}")
    if not questions:
        raise UnparseableReply(f"no usable question: {'; '.join(problems)}", raw=text[:4000])
    return [k for _, k, _ in keywords], questions


VIDEO_RUBRIC = RubricSpec(
    template_version=VIDEO_RUBRIC_TEMPLATE_VERSION,
    schema=VideoRubricReply,
    prompt=video_rubric_prompt,
    parse=parse_video_rubric,
)


def _parse_choice(text: str, question: Question) -> str:
    return parse_letter(text, question.choices)


def _request(question: Question, media: MediaPart) -> JudgeRequest:
    return JudgeRequest(
        prompt=video_validator_prompt(question.question, question.choices),
        media=(media,),
        schema=ChoiceVerdictReply,
        role="validator",
    )


def _batch_request(questions: Sequence[Question], media: MediaPart) -> JudgeRequest:
    return JudgeRequest(
        prompt=video_batch_validator_prompt(questions),
        media=(media,),
        schema=BatchChoiceReply,
        role="validator",
    )


VIDEO_VALIDATOR = ValidatorSpec(
    request=_request,
    batch_request=_batch_request,
    parse=_parse_choice,
    template_version=VIDEO_VALIDATOR_TEMPLATE_VERSION,
    batch_template_version=VIDEO_BATCH_VALIDATOR_TEMPLATE_VERSION,
)


def video_questions(value: Any, row_id: str) -> list[Question] | None:
    """A row's own questions: [{question, choices: ["a) ..", ...], answer: "b", tag}]; two to
    four choices, the answer a choice's letter or its text (made the letter)."""
    return parse_questions(value, row_id, choices_required=True, max_choices=MAX_CHOICES)


class GeckoVideo(GeckoMetric):
    """Gecko for text-to-video: multiple-choice questions per prompt, validated on the video."""

    name = "gecko-video"
    media_field = "video"
    required_columns: tuple[str, ...] = ("prompt", "video")
    known_columns = frozenset({"id", "prompt", "video", "questions"})
    rubric_spec = VIDEO_RUBRIC
    validator_spec = VIDEO_VALIDATOR

    def row_questions(self, value: Any, row_id: str) -> list[Question] | None:
        return video_questions(value, row_id)

    def placeholder_question(self, keyword: str) -> Question:
        choices = [f"{keyword}, as described", "something else", "both", "neither"]
        return Question(
            question=f"Which of these does the video show for {keyword}?",
            expected="a",
            tag="object",
            choices=label_choices(choices),
        )


GECKO_VIDEO = GeckoVideo()
