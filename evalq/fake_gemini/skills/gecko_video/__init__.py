"""The simulated judge's Gecko video answers (rubrics with motion, verdicts from the first,
middle and last frames), and batched validator answers for both Gecko metrics."""

from __future__ import annotations

import json
import re

from evalq.fake_gemini.prompt_grammar import (
    CHOICES,
    MISSING_KEYWORDS,
    QUESTIONS,
    VIDEO_DESCRIPTION,
    VIDEO_QUESTION,
    VIDEO_QUESTIONS,
    block,
)
from evalq.fake_gemini.protocol import FakeRequest, SeesImages
from evalq.fake_gemini.skills.gecko_image.choices import answer_choice_question
from evalq.fake_gemini.skills.gecko_image.verdicts import answer_question
from evalq.fake_gemini.skills.gecko_video.choices import (
    answer_choice,
    choices_in,
    numbered_questions,
)
from evalq.fake_gemini.skills.gecko_video.footage import watch
from evalq.fake_gemini.skills.gecko_video.rubric import fill_video_gap, write_video_rubric

_YES_NO_MARK = re.compile(r"\s*\(yes or no\)\s*$", re.IGNORECASE)


def answer(request: FakeRequest, judge: SeesImages) -> str | None:
    text = request.text
    if (description := block(text, VIDEO_DESCRIPTION)) is not None:
        rubric = write_video_rubric(description)
        if (missing := block(text, MISSING_KEYWORDS)) is not None:
            rubric = fill_video_gap(rubric, missing.splitlines())
        return json.dumps(rubric)
    if (question := block(text, VIDEO_QUESTION)) is not None:
        choices = choices_in(block(text, CHOICES) or "")
        letter, why = answer_choice(question, choices, watch(request, judge))
        if request.response_schema is None:
            return f"{why}\nAnswer: {letter}"
        return json.dumps({"explanation": why, "answer": letter})
    if (listed := block(text, VIDEO_QUESTIONS)) is not None:
        footage = watch(request, judge)
        answers = []
        for number, q, choices in numbered_questions(listed):
            letter, why = answer_choice(q, choices, footage)
            answers.append({"question_id": number, "explanation": why, "answer": letter})
        return json.dumps({"answers": answers})
    if (listed := block(text, QUESTIONS)) is not None:
        scene = judge.scene_for(request.media)
        answers = []
        for number, q, choices in numbered_questions(listed):
            if choices:  # a hand-written multiple-choice question in an image batch
                picked, why = answer_choice_question(q, choices, scene)
                answers.append(
                    {"question_id": number, "explanation": why, "answer": picked or "cannot tell"}
                )
                continue
            verdict = answer_question(_YES_NO_MARK.sub("", q), scene)
            answers.append(
                {
                    "question_id": number,
                    "explanation": verdict.explanation,
                    "answer": verdict.answer,
                }
            )
        return json.dumps({"answers": answers})
    return None
