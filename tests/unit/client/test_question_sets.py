"""--questions-from's borrowing (evalq.client.question_sets) against a reader built by hand, and
`evalq rubrics`' media paths moved to another folder (evalq.client.rubric_file): pure parts."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalq.client.question_sets import QuestionSets, borrow_questions
from evalq.client.rubric_file import _moved_cell
from evalq.core.dataset import LoadedDataset
from evalq.core.errors import DatasetError, JobNotFound
from evalq.core.models import JobSummary, Question, RowInput

ASKED = [
    Question(question="Is there a cat?", expected="yes", tag="animal", human="yes"),
    Question(question="Is it black?", expected="no", tag="color"),
]


class QuestionSetReader:
    def __init__(self, sets: dict[str, QuestionSets]) -> None:
        self.sets = sets

    def question_sets(self, job_id: str) -> dict[str, list[Question]]:
        if job_id not in self.sets:
            raise JobNotFound(f"no job {job_id!r} in Redis")
        return self.sets[job_id]

    def summary(self, job_id: str) -> JobSummary:
        raise AssertionError("the metric comes with the question sets")


READER = QuestionSetReader(
    {"aaaaaaaaaaaa": QuestionSets("gecko-image", {"a cat": ASKED, "a dog": ASKED[:1]})}
)


def loaded_prompts(*prompts: str, own: list[Question] | None = None) -> LoadedDataset:
    rows = [RowInput(id=f"r{i}", line=i, prompt=p, questions=own) for i, p in enumerate(prompts, 1)]
    return LoadedDataset(path=Path("d.jsonl"), rows=rows)


def test_every_row_is_given_the_questions_that_job_asked_for_its_prompt() -> None:
    own = [Question(question="mine?", expected="yes")]
    loaded = borrow_questions(
        READER, "gecko-image", "aaaaaaaaaaaa", loaded_prompts("a cat", "a dog", own=own), {}
    )
    cat, dog = loaded.rows
    assert [q.question for q in cat.questions or []] == ["Is there a cat?", "Is it black?"]
    assert [q.question for q in dog.questions or []] == ["Is there a cat?"]
    assert all(q.human is None for q in cat.questions or [])  # about the other job's media
    assert loaded.warnings == [
        "--questions-from aaaaaaaaaaaa: 2 row(s) had questions of their own; they are asked "
        "that job's"
    ]


def test_a_job_of_another_metric_is_refused_naming_both() -> None:
    with pytest.raises(DatasetError, match="that job is gecko-image and this one is gecko-video"):
        borrow_questions(READER, "gecko-video", "aaaaaaaaaaaa", loaded_prompts("a cat"), {})
    other = QuestionSetReader({"bbbbbbbbbbbb": QuestionSets("pointwise")})
    with pytest.raises(DatasetError, match="that job is pointwise and this one is gecko-image"):
        borrow_questions(other, "gecko-image", "bbbbbbbbbbbb", loaded_prompts("a cat"), {})


def test_rows_whose_prompt_that_job_never_asked_about_are_named_and_counted() -> None:
    prompts = ["a cat", *[f"new {i}" for i in range(12)]]
    with pytest.raises(DatasetError) as caught:
        borrow_questions(READER, "gecko-image", "aaaaaaaaaaaa", loaded_prompts(*prompts), {})
    message = str(caught.value)
    assert "12 row(s) have a prompt that job never asked about" in message
    assert "r2 (line 2)" in message and "r11 (line 11)" in message
    assert "r12 (line 12)" not in message and message.endswith("and 2 more")


def test_a_job_that_exists_nowhere_and_extend_are_refused() -> None:
    with pytest.raises(JobNotFound, match="no job cccccccccccc in Redis or the archive"):
        borrow_questions(READER, "gecko-image", "cccccccccccc", loaded_prompts("a cat"), {})
    with pytest.raises(DatasetError, match="--questions extend does not go with it"):
        borrow_questions(
            READER, "gecko-image", "aaaaaaaaaaaa", loaded_prompts("a cat"), {"questions": "extend"}
        )


def test_relative_media_paths_name_the_same_files_from_the_new_folder(tmp_path: Path) -> None:
    was, now = tmp_path / "data", tmp_path / "review"
    assert _moved_cell("images/a.png", was, now) == ("../data/images/a.png", 1)
    for kept in ("/abs/a.png", "https://x.org/a.png", "gs://b/a.png", "data:image/png;base64,AA"):
        assert _moved_cell(kept, was, now) == (kept, 0)
    form = {"file_data": {"file_uri": "a.mp4", "mime_type": "video/mp4"}}
    assert _moved_cell(form, was, now) == (
        {"file_data": {"file_uri": "../data/a.mp4", "mime_type": "video/mp4"}},
        1,
    )
    text = '{"contents": [{"parts": [{"file_data": {"file_uri": "a.mp4"}}]}]}'
    moved, count = _moved_cell(text, was, now)
    assert count == 1 and '"../data/a.mp4"' in moved


def test_rubrics_names_the_rows_it_cannot_read_and_writes_nothing(tmp_path: Path) -> None:
    from evalq.client.rubrics import write_rubrics
    from evalq.worker.jobs.control import JobControl
    from evalq.worker.settings import Settings
    from tests.support.datasets import png, write_rows

    png(tmp_path / "a.png")
    dataset = write_rows(
        tmp_path / "d.jsonl",
        [
            {"id": "ok", "prompt": "a red square", "image": "a.png"},
            {"id": "gone", "prompt": "a blue square", "image": "missing.png"},
        ],
    )
    settings = Settings(redis_url="redis://127.0.0.1:9/0", api_key=None)  # never reached
    out = tmp_path / "q.jsonl"
    control = JobControl.from_settings(settings)
    with pytest.raises(DatasetError) as caught:
        write_rubrics(settings, control, dataset, out)
    assert "row gone: field 'image': file not found: missing.png" in str(caught.value)
    assert "nothing was written" in str(caught.value) and not out.exists()
    with pytest.raises(DatasetError, match="is the dataset itself"):
        write_rubrics(settings, control, dataset, dataset)
    with pytest.raises(DatasetError, match="it asks no question sets"):
        write_rubrics(settings, control, dataset, out, metric="pointwise")
