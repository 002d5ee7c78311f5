"""Bounds on what a row makes: a generated rubric and a stored plan. Past them the row fails
with a reason and a message saying which bound, and the other rows go on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalq.core.errors import InputError, UnparseableReply
from evalq.core.metric import check_plan_size
from evalq.core.models import Question, RowInput
from evalq.metrics.gecko import metric as gecko
from tests.support.datasets import png, write_rows
from tests.support.judges import ListJudge
from tests.support.stack import stack


def rubric(questions: int, text: str = "Is there a cat?") -> str:
    return json.dumps(
        {
            "keywords": ["cat"],
            "questions": [
                {"question": f"{text} {i}", "answer": "yes", "tag": "animal", "keywords": ["cat"]}
                for i in range(questions)
            ],
        }
    )


def test_a_rubric_with_too_many_questions_is_no_rubric() -> None:
    with pytest.raises(UnparseableReply, match=r"5,000 questions; at most 100"):
        gecko.generate_rubric(ListJudge([rubric(5000)]), "a cat")


def test_a_rubric_with_too_much_text_is_no_rubric() -> None:
    with pytest.raises(UnparseableReply, match=r"characters of text; at most 100,000"):
        gecko.generate_rubric(ListJudge([rubric(3, "Is it " + "very " * 40_000)]), "a cat")


def test_a_rubric_within_the_bounds_is_kept_whole() -> None:
    got, _ = gecko.generate_rubric(ListJudge([rubric(gecko.MAX_RUBRIC_QUESTIONS)]), "a cat")
    assert len(got.questions) == gecko.MAX_RUBRIC_QUESTIONS


def test_the_re_ask_does_not_grow_a_rubric_past_the_bound() -> None:
    first = json.dumps(
        {
            "keywords": ["cat", "hat", "dog"],
            "questions": [
                {"question": f"Is there a cat {i}?", "answer": "yes", "keywords": ["cat"]}
                for i in range(gecko.MAX_RUBRIC_QUESTIONS - 1)
            ],
        }
    )
    second = json.dumps(
        {
            "keywords": ["hat", "dog"],
            "questions": [
                {"question": "Is there a hat?", "answer": "yes", "keywords": ["hat"]},
                {"question": "Is there a dog?", "answer": "yes", "keywords": ["dog"]},
            ],
        }
    )
    got, _ = gecko.generate_rubric(ListJudge([first, second]), "a cat in a hat with a dog")
    assert len(got.questions) == gecko.MAX_RUBRIC_QUESTIONS
    assert got.coverage.missing == ["dog"]  # the bound wins over the last gap question


def test_plan_size_check() -> None:
    rubric = gecko.dataset_rubric(
        RowInput(
            id="r1", line=1, prompt="p", questions=[Question(question="x" * 5000, expected="yes")]
        )
    )
    plan = gecko.GeckoPlan(
        units=[gecko.QuestionUnit(index=0, judge_model="j", question=0)],
        rubric=rubric,
        validator="per-question",
        validator_template="v",
        judges=["j"],
    )
    check_plan_size(plan, "r1", 10_000)
    with pytest.raises(InputError, match="EVALQ_MAX_PLAN_BYTES") as caught:
        check_plan_size(plan, "r1", 4000)
    assert (caught.value.row_id, caught.value.field) == ("r1", "(plan)")


@pytest.mark.integration
def test_a_plan_past_the_bound_fails_its_row_and_is_not_stored(tmp_path: Path) -> None:
    png(tmp_path / "a.png")
    small = [{"question": "Is it red?", "answer": "yes", "tag": "color"}]
    large = [
        {"question": f"Is part {i} red, as in {'red ' * 60}?", "answer": "yes"} for i in range(20)
    ]
    rows = [
        {"id": "small", "prompt": "red", "image": "a.png", "questions": small},
        {"id": "large", "prompt": "red", "image": "a.png", "questions": large},
    ]
    data = tmp_path / "d.jsonl"
    write_rows(data, rows)
    with stack(tmp_path / "stack", EVALQ_MAX_PLAN_BYTES="4000") as s:
        client = s.client()
        job = client.submit("gecko-image", data).job_id
        summary = client.wait(job, timeout_s=120)
        results = {r.id: r for r in client.results(job)}
        assert summary.status == "finished"
        assert results["small"].status == "scored"
        assert results["large"].status == "failed"
        assert results["large"].reason == "input_error"
        assert "EVALQ_MAX_PLAN_BYTES" in (results["large"].error or "")
        assert not s.redis_client().exists(f"evalq:job:{job}:plan:large")
