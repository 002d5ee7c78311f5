"""Names that nearly fit say what was meant, through the CLI: a metric or template typo gets a
"did you mean", a template path that is not there says the file is missing, and Vertex's
`pairwise_NAME` templates are understood by pairwise and refused by pointwise with the name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import bare_env, one_line_refusal, run_evalq

BUILT_IN = (
    "built-in templates: summarization_quality, question_answering_quality, groundedness, "
    "instruction_following, fluency, coherence"
)


@pytest.fixture(name="env")
def hints_env(scratch_url: str) -> dict[str, str]:
    return bare_env() | {"EVALQ_REDIS_URL": scratch_url, "EVALQ_ARCHIVE_URL": "off"}


def refusal(env: dict[str, str], folder: Path, *args: str) -> str:
    done = run_evalq(env, *args, cwd=folder)
    assert done.returncode == 2, done.stdout + done.stderr
    return one_line_refusal(done)


@pytest.mark.parametrize(
    ("template", "said"),
    [
        (
            "my_rubric.txt",
            "error: template file 'my_rubric.txt' not found (a relative path starts from the "
            "folder the command runs in); give a file that exists, or a built-in template "
            f"({BUILT_IN})",
        ),
        (
            "question_answering_qualty",
            "error: unknown template 'question_answering_qualty' (did you mean "
            f"'question_answering_quality'?); {BUILT_IN} (or give a template file)",
        ),
        (
            "pairwise_question_answering_quality",
            "error: template 'pairwise_question_answering_quality' is Vertex's name for the "
            "pairwise form of 'question_answering_quality': give --template "
            "question_answering_quality (with `evalq run pairwise` too)",
        ),
    ],
)
def test_a_template_that_does_not_fit_says_what_was_meant(
    env: dict[str, str], tmp_path: Path, template: str, said: str
) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"prompt": "p", "response": "r"}\n')
    args = ["run", "pointwise", str(data), "--template", template, "--dry-run"]
    assert refusal(env, tmp_path, *args) == said


def test_vertex_pairwise_template_names_are_understood_by_pairwise(
    env: dict[str, str], tmp_path: Path
) -> None:
    data = tmp_path / "p.jsonl"
    data.write_text('{"prompt": "p", "response_a": "a", "response_b": "b"}\n')
    vertex = "pairwise_question_answering_quality"
    args = ["run", "pairwise", str(data), "--template", vertex, "--dry-run", "--json"]
    done = run_evalq(env, *args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["rows_planned"] == 1


def test_a_metric_typo_gets_a_did_you_mean(env: dict[str, str], tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"prompt": "p", "response": "r"}\n')
    done = run_evalq(env, "run", "pointwize", str(data), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    said = done.stderr.strip().splitlines()[-1]  # click's usage lines, then its one error line
    assert said.endswith(
        "'pointwize' is not a metric (did you mean 'pointwise'?); metrics: gecko-image, "
        "gecko-video, groundedness, pairwise, pointwise, rank, rubric"
    )
