"""Question-set fingerprints (evalq.core.question_sets): a row's and a job's over its rows; and
questions written back in the row-questions form read as the same questions."""

from __future__ import annotations

import pytest

from evalq.core.counters import JobCounters
from evalq.core.models import JobConfig, Question, RowResult
from evalq.core.question_sets import job_question_set, question_set_fingerprint
from evalq.core.row_questions import parse_questions, question_items
from evalq.core.summary import build_summary


def expected_question(text: str, expected: str = "yes", tag: str = "object") -> Question:
    return Question(question=text, expected=expected, tag=tag)


def action_question(text: str, expected: str = "b") -> Question:
    choices = ["a) walks", "b) runs", "c) sits", "d) flies"]
    return Question(question=text, expected=expected, tag="action", choices=choices)


SET = [
    expected_question("Is there a cat?"),
    expected_question("Is the cat black?", tag="color"),
    action_question("What moves?"),
]


def test_a_fingerprint_is_short_hex_and_ignores_the_order() -> None:
    fingerprint = question_set_fingerprint(SET)
    assert len(fingerprint) == 16 and int(fingerprint, 16) >= 0
    assert question_set_fingerprint(list(reversed(SET))) == fingerprint


@pytest.mark.parametrize(
    "change",
    [
        {"question": "Is there a dog?"},
        {"expected": "no"},
        {"tag": "animal"},
        {"choices": ["yes", "no", "maybe"]},
    ],
)
def test_text_answer_tag_and_choices_change_the_fingerprint(change: dict[str, object]) -> None:
    edited = [SET[0].model_copy(update=change), *SET[1:]]
    assert question_set_fingerprint(edited) != question_set_fingerprint(SET)


def test_keywords_justification_source_and_rater_answers_do_not() -> None:
    update = {
        "keywords": ["cat"],
        "justification": "why",
        "source": "dataset",
        "human": "no",
    }
    edited = [q.model_copy(update=update) for q in SET]
    assert question_set_fingerprint(edited) == question_set_fingerprint(SET)


def test_a_question_asked_twice_is_another_set() -> None:
    assert question_set_fingerprint([*SET, SET[0]]) != question_set_fingerprint(SET)


def test_questions_written_back_read_as_the_same_questions() -> None:
    image = [
        expected_question("Is there a cat?").model_copy(
            update={"keywords": ["cat"], "justification": "j"}
        ),
        expected_question("Is the cat white?", "no", "color"),
    ]
    read = parse_questions(question_items(image), "r1")
    assert read is not None
    assert [(q.question, q.expected, q.tag, q.choices, q.keywords) for q in read] == [
        (q.question, q.expected, q.tag, q.choices, q.keywords) for q in image
    ]
    assert read[0].justification == "j"
    assert "choices" not in question_items(image)[0]  # yes/no: the loader's default
    choices = [action_question("What moves?"), action_question("Which way?", "d")]
    read_choices = parse_questions(question_items(choices), "r2", choices_required=True)
    assert read_choices is not None
    assert question_set_fingerprint(read_choices) == question_set_fingerprint(choices)
    assert question_set_fingerprint(read) == question_set_fingerprint(image)


def asked_row(
    line: int, prompt: str, fingerprint: str | None, candidate: str | None = None
) -> RowResult:
    return RowResult(
        id=str(line),
        line=line,
        prompt=prompt,
        status="scored",
        score=1.0,
        question_set=fingerprint,
        candidate=candidate,
    )


def test_the_jobs_fingerprint_covers_every_row_whatever_the_order_and_candidates() -> None:
    rows = [asked_row(1, "a", "f1"), asked_row(2, "b", "f2"), asked_row(3, "c", None)]
    whole = job_question_set(rows)
    assert whole is not None and len(whole) == 16
    assert job_question_set(list(reversed(rows))) == whole
    cells = [
        asked_row(1, "a", "f1", "x"),
        asked_row(1, "a", "f1", "y"),
        asked_row(2, "b", "f2", "x"),
    ]
    assert job_question_set(cells) == whole
    assert job_question_set([asked_row(1, "a", "f1"), asked_row(2, "b", "f3")]) != whole
    assert job_question_set([asked_row(1, "b", "f1"), asked_row(2, "a", "f2")]) != whole
    assert job_question_set([asked_row(1, "a", None)]) is None
    assert job_question_set([]) is None


def test_the_summary_carries_the_jobs_fingerprint() -> None:
    config = JobConfig(
        job_id="j", metric="gecko-image", judge_model="m", dataset="d", rows_total=2, created_at=0
    )
    counters = JobCounters(status="finished", rows_done=2, rows_scored=2)
    rows = [asked_row(1, "a", "f1"), asked_row(2, "b", "f2")]
    summary = build_summary(config, counters, {}, rows, now=1.0)
    assert summary.question_set == job_question_set(rows)
    plain = [r.model_copy(update={"question_set": None}) for r in rows]
    assert build_summary(config, counters, {}, plain, now=1.0).question_set is None
