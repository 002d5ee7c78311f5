"""A regrade's rows (evalq.client.regrade) from stored inputs built by hand: which rows, their
frozen questions and generated responses, media that are gone, and the version-change line of
`evalq status` (evalq.client.judge_versions) against a reader built by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalq.client.judge_versions import version_change_note
from evalq.client.regrade import (
    frozen_questions,
    frozen_responses,
    refuse_gone_media,
    regrade_inputs,
    some_rows,
)
from evalq.core.data_roots import DataRoots
from evalq.core.errors import DatasetError, EvalqError
from evalq.core.media import MediaRules
from evalq.core.models import JobSummary, MediaRef, Question, RowInput, RowResult
from evalq.worker.settings import Settings
from tests.support.job_configs import job_config
from tests.support.summaries import job_summary


def cells(lines: int, candidates: tuple[str, ...] = ("a", "b")) -> list[RowInput]:
    return [
        RowInput(id=f"r{line}", line=line, prompt=f"p{line}", candidate=c)
        for line in range(1, lines + 1)
        for c in candidates
    ]


def test_rows_are_the_first_n_lines_or_a_seeded_sample_with_every_cell() -> None:
    rows = cells(10)
    assert [r.line for r in some_rows(rows, 3, None)] == [1, 1, 2, 2, 3, 3]
    drawn = some_rows(rows, 4, 7)
    assert drawn == some_rows(rows, 4, 7)  # the seed says which
    assert len({r.line for r in drawn}) == 4 and len(drawn) == 8
    assert any({r.line for r in some_rows(rows, 4, seed)} != {1, 2, 3, 4} for seed in (7, 8))
    assert some_rows(rows, 50, None) == rows and some_rows(rows, None, None) == rows
    with pytest.raises(DatasetError, match="--rows"):
        some_rows(rows, 0, None)
    with pytest.raises(DatasetError, match="--seed"):
        some_rows(rows, None, 3)


def test_rows_take_the_questions_their_prompt_was_asked_and_rows_without_any_are_left_out() -> None:
    asked = [Question(question="Is there a cat?", expected="yes", tag="animal")]
    rows = [RowInput(id="r1", line=1, prompt="a cat"), RowInput(id="r2", line=2, prompt="gone")]
    kept, left_out = frozen_questions(rows, {"a cat": asked})
    assert [(r.id, r.questions) for r in kept] == [("r1", asked)]
    assert left_out == 1


def test_a_response_the_model_under_test_wrote_is_judged_again_not_written_again() -> None:
    config = job_config("groundedness")
    row = RowInput(id="r1", line=1, data={"query": "q?", "context": "c."})
    given = RowInput(id="r2", line=2, data={"query": "q?", "context": "c.", "response": "mine."})
    written = RowResult(
        id="r1", line=1, prompt="", status="scored", score=1.0, details={"response": "It is c."}
    )
    kept = RowResult(
        id="r2", line=2, prompt="", status="scored", score=1.0, details={"response": "mine."}
    )
    frozen = frozen_responses(config, [row, given], [written, kept])
    assert frozen[0].data["response"] == "It is c."
    assert frozen[1] == given


def test_a_ranked_candidate_written_for_the_job_is_frozen_as_a_column() -> None:
    config = job_config(
        "rank", options={"candidates": ["a", "b"], "candidate_prompts": {"b": "Answer briefly."}}
    )
    row = RowInput(id="r1", line=1, data={"prompt": "q?", "a": "x"})
    result = RowResult(
        id="r1",
        line=1,
        prompt="",
        status="scored",
        score=1.0,
        details={"candidates": ["a", "b"], "generated": {"b": "y"}},
    )
    (frozen,) = frozen_responses(config, [row], [result])
    assert frozen.data == {"prompt": "q?", "a": "x", "b": "y"}


def test_a_local_file_gone_refuses_the_regrade_naming_its_line(tmp_path: Path) -> None:
    here = tmp_path / "a.png"
    here.write_bytes(b"x")
    rules = MediaRules(roots=DataRoots.of([tmp_path]))

    def row(line: int, path: Path) -> RowInput:
        ref = MediaRef(kind="path", value=str(path))
        return RowInput(id=f"r{line}", line=line, prompt="p", media={"image": ref})

    url = RowInput(
        id="r9", line=9, prompt="p", media={"image": MediaRef(kind="url", value="https://x/y")}
    )
    refuse_gone_media("aaaaaaaaaaaa", [row(1, here), url], rules)  # nothing gone
    with pytest.raises(DatasetError) as refused:
        refuse_gone_media("aaaaaaaaaaaa", [row(1, here), row(4, tmp_path / "b.png")], rules)
    message = str(refused.value)
    assert "the media of 1 row(s) are gone, so nothing was submitted" in message
    assert f"line 4 (row r4) image: file not found: {tmp_path / 'b.png'}" in message
    assert "\n" not in message


class Stored:
    """A reader of one stored pointwise job of two lines, the second refused at submit."""

    def __init__(self, folder: Path, status: str = "finished") -> None:
        self.settings = Settings(api_key=None)
        self.status = status
        self.job = job_config(
            "pointwise",
            job_id="aaaaaaaaaaaa",
            dataset=str(folder / "d.jsonl"),
            data_roots=[str(folder)],
            options={"template": "fluency"},
        )

    def config(self, job_id: str) -> Any:
        return self.job

    def summary(self, job_id: str) -> JobSummary:
        return job_summary(2, status=self.status)

    def stored_inputs(self, job_id: str) -> list[RowInput]:
        return [RowInput(id="r1", line=1, data={"response": "Fine."})]

    def results(self, job_id: str) -> list[RowResult]:
        refused = RowResult(id="r2", line=2, prompt="", status="failed", score=None)
        return [RowResult(id="r1", line=1, prompt="", status="scored", score=1.0), refused]


def test_a_regrade_keeps_the_jobs_options_and_says_which_lines_it_left_out(
    tmp_path: Path,
) -> None:
    stored: Any = Stored(tmp_path)
    asked = regrade_inputs(stored, "aaaaaaaaaaaa", {"samples": 3})
    assert asked.options == {"template": "fluency", "samples": 3}
    assert [r.id for r in asked.loaded.rows] == ["r1"]
    assert asked.spec["judge_models"] == ["m"] and asked.spec["use_cache"] is False
    assert asked.loaded.warnings == [
        "1 line(s) of job aaaaaaaaaaaa were refused at submit (no row was stored for them): "
        "left out"
    ]
    running: Any = Stored(tmp_path, "running")
    with pytest.raises(EvalqError, match="job aaaaaaaaaaaa is running: a job is regraded once"):
        regrade_inputs(running, "aaaaaaaaaaaa", {})
    with pytest.raises(TypeError, match="judge"):
        misspelt: Any = {"judge": "x"}
        regrade_inputs(stored, "aaaaaaaaaaaa", misspelt)


class History:
    """A reader whose jobs are given: what version_change_note lists."""

    def __init__(self, *jobs: JobSummary) -> None:
        self.listed = list(jobs)

    def jobs(self, which: Any, on_missing: Any = None) -> list[JobSummary]:
        return [j for j in self.listed if j.metric == which.metric]


def judged(
    job_id: str, at: float, versions: dict[str, str], dataset: str = "/d.jsonl"
) -> JobSummary:
    return job_summary(
        3,
        job_id=job_id,
        dataset=dataset,
        created_at=at,
        judge_setup={"model_versions": versions},
    )


def test_a_judge_answering_as_a_version_its_last_job_never_saw_is_said_with_drift() -> None:
    first = judged("aaaaaaaaaaa1", 1.0, {"flash": "v1"})
    other_judge = judged("aaaaaaaaaaa2", 2.0, {"pro": "p1"})
    elsewhere = judged("aaaaaaaaaaa3", 3.0, {"flash": "v0"}, dataset="/other.jsonl")
    now = judged("aaaaaaaaaaa4", 4.0, {"flash": "v1,v2"})
    reader: Any = History(first, other_judge, elsewhere, now)
    assert version_change_note(reader, now) == (
        "judge version changed since aaaaaaaaaaa1: flash answered as v2 (that job saw v1); "
        "see `evalq drift aaaaaaaaaaa1 aaaaaaaaaaa4`"
    )
    assert version_change_note(reader, first) is None  # nothing before it
    assert version_change_note(reader, other_judge) is None  # no earlier job of that judge
    same = judged("aaaaaaaaaaa5", 5.0, {"flash": "v2"})
    later: Any = History(now, same)
    assert version_change_note(later, same) is None  # v2 seen already
