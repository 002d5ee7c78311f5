"""No column dropped in silence, through the CLI and the Python API: a CSV header, JSONL object or
DataFrame naming a column twice is refused before anything is stored, saying where and to rename
one (--map can't pick one of two); a name given twice to a flag is refused in one line, exit 2.

The refusals run against the scratch database, which no worker watches and which starts empty:
after them it holds no job, and a submit of the fixed file (the control) does store one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import evalq
from evalq.core.errors import DatasetError
from evalq.worker.settings import Settings
from tests.conftest import FakeGemini, worker_env
from tests.support.cli import one_line_refusal, run_evalq
from tests.support.datasets import write_rows
from tests.support.scratch import job_keys

pytestmark = pytest.mark.integration

QA = ("--template", "question_answering_quality")
RENAME = "rename one of them"
BY_NAME = "--map reads a column by its name, so it can't pick one of two"


def evaluate_qa(
    frame: pd.DataFrame, redis_url: str, fake: FakeGemini, folder: Path, **given: Any
) -> Any:
    """evalq.evaluate() of `frame` as a question-answering pointwise job, stored in the Redis at
    `redis_url`: the Python API's way to the refusals the CLI gives."""
    settings = Settings(redis_url=redis_url, gemini_base_url=fake.url, api_key=None)
    return evalq.evaluate(
        frame,
        "pointwise",
        template="question_answering_quality",
        base_dir=folder,
        settings=settings,
        **given,
    )


def test_a_csv_naming_a_column_twice_is_refused_and_nothing_is_stored(
    scratch_url: str, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    env = worker_env(scratch_url, fake_gemini.url, COLUMNS="80")
    data = tmp_path / "answers.csv"
    data.write_text("id,prompt,response,response\nr1,What is 2+2?,4,five\n", encoding="utf-8")
    said = one_line_refusal(run_evalq(env, "run", "pointwise", str(data), *QA))
    assert said.startswith(
        f"error: {data}: column 'response' appears 2 times, at positions 3 and 4"
    )
    assert "nothing was submitted" in said and RENAME in said and BY_NAME in said
    # The same refusal for a plan: --dry-run reads the dataset the same way.
    dry = one_line_refusal(run_evalq(env, "run", "pointwise", str(data), *QA, "--dry-run"))
    assert "column 'response' appears 2 times, at positions 3 and 4" in dry

    # The header's cells are read without the spaces around them (as --map and --candidates
    # names are): " response" is the column "response", so it is the same column twice.
    spaced = tmp_path / "spaced.csv"
    spaced.write_text("id,prompt, response ,response\nr1,What is 2+2?,4,five\n", encoding="utf-8")
    said = one_line_refusal(run_evalq(env, "run", "pointwise", str(spaced), *QA))
    assert "column 'response' appears 2 times, at positions 3 (' response ') and 4" in said

    # Two columns the header leaves unnamed, one holding a value: that value would be dropped.
    unnamed = tmp_path / "unnamed.csv"
    unnamed.write_text("id,prompt,response,,\nr1,q?,4,,\nr2,q?,5,kept?,\n", encoding="utf-8")
    said = one_line_refusal(run_evalq(env, "run", "pointwise", str(unnamed), *QA))
    assert "line 3: position 4 holds a value" in said and "positions 4 and 5" in said
    assert job_keys(scratch_url) == []

    # Renamed, the file runs (and a job is stored: the check above would have seen one).
    data.write_text("id,prompt,response,response_2\nr1,What is 2+2?,4,five\n", encoding="utf-8")
    ran = run_evalq(env, "run", "pointwise", str(data), *QA)
    assert ran.returncode == 0, ran.stderr
    assert job_keys(scratch_url) != []


def test_a_jsonl_object_with_a_key_twice_is_refused_and_nothing_is_stored(
    scratch_url: str, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    env = worker_env(scratch_url, fake_gemini.url, COLUMNS="80")
    good = {"id": "r1", "prompt": "What is 2+2?", "response": "4"}
    twice = '{"id": "r2", "prompt": "What is 3+3?", "response": "6", "response": "six"}'
    data = write_rows(tmp_path / "answers.jsonl", [good, twice])
    said = one_line_refusal(run_evalq(env, "run", "pointwise", str(data), *QA))
    assert said.startswith(
        f"error: {data}: line 2: key 'response' appears 2 times, at positions 3 and 4"
    )
    assert "JSON keeps only the last" in said and "nothing was submitted" in said
    assert RENAME in said

    # A key twice inside a column's value (a question's answer) is dropped just the same.
    nested = (
        '{"id": "r1", "prompt": "p", "response": "r", "questions": '
        '[{"question": "Q?", "answer": "yes", "answer": "no"}]}'
    )
    said = one_line_refusal(
        run_evalq(env, "run", "pointwise", str(write_rows(tmp_path / "n.jsonl", [nested])), *QA)
    )
    assert "line 1: in questions[0], key 'answer' appears 2 times, at positions 2 and 3" in said
    assert job_keys(scratch_url) == []


def test_a_dataframe_with_two_columns_of_one_name_is_refused_and_nothing_is_stored(
    scratch_url: str, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    frame = pd.DataFrame(
        [["r1", "What is 2+2?", "4", "five"]], columns=["id", "prompt", "response", "response"]
    )
    for dry_run in (False, True):
        with pytest.raises(DatasetError) as refused:
            evaluate_qa(frame, scratch_url, fake_gemini, tmp_path, dry_run=dry_run)
        said = str(refused.value)
        assert said.startswith("DataFrame: column 'response' appears 2 times, at positions 3 and 4")
        assert "nothing was submitted" in said and RENAME in said
        assert "column_map reads a column by its name" in said
    assert job_keys(scratch_url) == []
    assert not list(tmp_path.glob(".evalq-*.jsonl"))  # no file was written for it either


def test_a_name_given_twice_to_candidates_group_by_or_map_is_refused_in_one_line(
    scratch_url: str, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    env = worker_env(scratch_url, fake_gemini.url, COLUMNS="80")
    row = {"id": "r1", "prompt": "What is 2+2?", "a": "4", "b": "four", "tier": "gold"}
    data = str(write_rows(tmp_path / "d.jsonl", [row]))

    def refused(*args: str) -> str:
        return one_line_refusal(run_evalq(env, "run", "pointwise", data, *QA, *args))

    said = refused("--candidates", "a,b,a")
    assert said == "error: --candidates names column 'a' 2 times; name each column once"
    assert refused("--candidates", "a, b,a ") == said  # names are read without their spaces
    ranked = one_line_refusal(run_evalq(env, "rank", data, "--candidates", "a,b,a"))
    assert ranked == "error: --candidates names candidate 'a' 2 times; name each candidate once"
    said = refused("--candidates", "a,b", "--group-by", "tier", "--group-by", "tier")
    assert said == "error: --group-by names column 'tier' 2 times; name each column once"
    said = refused("--map", "response=a", "--map", "response=b")
    assert said == (
        "error: --map: field 'response' is mapped twice (response=a, response=b); "
        "map each field once"
    )
    said = refused("--map", "prompt=a", "--map", "response=a")
    assert said == (
        "error: column map: column 'a' is mapped to both 'prompt' and 'response'; "
        "map each column to one field"
    )
    assert job_keys(scratch_url) == []

    # The same from Python: evaluate() refuses each before anything is stored.
    frame = pd.DataFrame([row])
    for given, message in [
        ({"candidates": ["a", "b", "a"]}, "--candidates names column 'a' 2 times"),
        (
            {"candidates": ["a", "b"], "group_by": ["tier", "tier"]},
            "--group-by names column 'tier' 2 times",
        ),
        ({"column_map": {"response": "a", "response ": "b"}}, "field 'response' is mapped twice"),
    ]:
        with pytest.raises(DatasetError, match=message):
            evaluate_qa(frame, scratch_url, fake_gemini, tmp_path, **given)
    assert job_keys(scratch_url) == []


def test_status_refuses_a_group_by_column_given_twice(
    client: Any, fake: FakeGemini, tmp_path: Path, redis_server: Any
) -> None:
    env = worker_env(redis_server.url, fake.url, COLUMNS="80")
    rows = [{"id": f"r{i}", "prompt": f"q {i}?", "response": f"a {i}", "tier": "t"} for i in (1, 2)]
    data = write_rows(tmp_path / "d.jsonl", rows)
    ran = run_evalq(env, "run", "pointwise", str(data), *QA, "--wait", "--json")
    assert ran.returncode == 0, ran.stderr
    job = json.loads(ran.stdout)["job_id"]
    said = one_line_refusal(
        run_evalq(env, "status", job, "--group-by", "tier", "--group-by", "tier")
    )
    assert said == "error: --group-by names column 'tier' 2 times; name each column once"
