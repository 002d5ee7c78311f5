"""Each metric's options model: `evalq run`'s metric flags are built from the models and give
the very options dict the hand-written flags gave (the table below is what they gave); the
Python API and the dry run check options through the same model, and a bad one names the
metric and the option."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from evalq.client.cli import main
from evalq.client.cli import submit as submit_command
from evalq.client.cli.metric_flags import job_options
from evalq.core.errors import DatasetError
from evalq.core.options import validate_options
from evalq.core.registry import BUILT_IN, metrics

# flags given (by field name) -> the options dict the hand-written flags made of them
FLAG_TABLE: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({}, {}),
    ({"validator": "batched"}, {"validator": "batched"}),
    ({"validator": "per-question"}, {"validator": "per-question"}),
    ({"rubric_model": "gemini-2.5-pro"}, {"rubric_model": "gemini-2.5-pro"}),
    ({"rubric_model": ""}, {}),
    ({"questions": "extend"}, {"questions": "extend"}),
    ({"candidate_model": "gx-gen"}, {"candidate_model": "gx-gen"}),
    ({"template": "fluency"}, {"template": "fluency"}),
    ({"template": ""}, {}),
    ({"samples": 3}, {"samples": 3}),
    (
        {"samples": 1, "template": "summarization_quality"},
        {"samples": 1, "template": "summarization_quality"},
    ),
    ({"validator": None, "samples": None, "questions": None}, {}),
]
FLAG_METRICS = {
    "validator": "gecko-image",
    "rubric_model": "gecko-video",
    "questions": "gecko-image",
    "candidate_model": "groundedness",
    "prompt_template": "rank",
    "template": "pointwise",
    "samples": "pairwise",
}


@pytest.mark.parametrize(("flags", "expected"), FLAG_TABLE)
def test_the_flags_give_the_options_they_gave(
    flags: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert job_options(**flags) == expected
    for name, value in expected.items():  # and the metric reading each one takes it as it is
        assert validate_options(FLAG_METRICS[name], {name: value}) == {name: value}


def test_files_are_read_by_the_client(tmp_path: Path) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("{context}\n\n{query}", encoding="utf-8")
    rubric = tmp_path / "mine.txt"
    rubric.write_text("Rate {response}", encoding="utf-8")
    assert job_options(prompt_template=prompt) == {"prompt_template": "{context}\n\n{query}"}
    assert job_options(template=str(rubric)) == {
        "template_text": "Rate {response}",
        "template": "mine.txt",
    }
    with pytest.raises(click.BadParameter, match="cannot read"):
        job_options(prompt_template=tmp_path / "missing.txt")


def test_samples_below_one_names_the_flag() -> None:
    with pytest.raises(click.BadParameter, match="a whole number from 1") as caught:
        job_options(samples=0)
    assert caught.value.param_hint == "--samples"


def test_every_metric_names_an_options_model() -> None:
    for metric in metrics():
        assert validate_options(metric, {}) == {}
    assert all(entry.options != "evalq.core.options:MetricOptions" for entry in BUILT_IN.values())


def test_the_model_drops_nothing_it_declares() -> None:
    given = {"candidates": ["a", "b"], "samples": 2, "temperature": 0, "bootstrap": 10}
    assert validate_options("rank", given) == given


def test_an_option_no_metric_declares_is_refused_naming_it_and_what_the_metric_takes() -> None:
    with pytest.raises(DatasetError) as caught:
        validate_options("rank", {"samples": 2, "x": 1})
    said = str(caught.value)
    assert said.startswith("rank does not take the option 'x'; rank takes ")
    assert "--samples" in said and "\n" not in said


@pytest.mark.parametrize(
    ("metric", "options", "field"),
    [
        ("gecko-image", {"validator": "sometimes"}, "validator"),
        ("gecko-video", {"questions": "append"}, "questions"),
        ("pointwise", {"samples": 0}, "samples"),
        ("pairwise", {"samples": "3"}, "samples"),
        ("groundedness", {"candidate_model": 7}, "candidate_model"),
        ("rank", {"candidate_prompts": ["x"]}, "candidate_prompts"),
    ],
)
def test_a_bad_option_names_the_metric_and_the_option(
    metric: str, options: dict[str, Any], field: str
) -> None:
    with pytest.raises(DatasetError, match=f"^{metric}: option {field}: "):
        validate_options(metric, options)


def test_a_bad_option_through_the_api_names_the_field(scratch_url: str, tmp_path: Path) -> None:
    import evalq
    from evalq.worker.settings import Settings

    data = tmp_path / "d.jsonl"
    data.write_text('{"prompt": "p", "image": "a.png"}\n', encoding="utf-8")
    settings = Settings(redis_url=scratch_url)
    for dry_run in (True, False):
        with pytest.raises(DatasetError, match=r"gecko-image: option validator: .*sometimes"):
            evalq.evaluate(
                data,
                "gecko-image",
                options={"validator": "sometimes"},
                settings=settings,
                dry_run=dry_run,
            )
    with pytest.raises(TypeError, match="judge_modle"):
        evalq.evaluate(data, "gecko-image", settings=settings, judge_modle="m")  # type: ignore[call-overload]


class Recorder:
    """Stands in for the client: records what `evalq run --dry-run` would plan."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def plan(self, metric: str, dataset: Path, **job: Any) -> Any:
        self.calls.append((metric, job))
        return _Json()


class _Json:
    refusal = None  # a plan some rows of which would run

    def model_dump_json(self) -> str:
        return "{}"


def test_run_hands_the_flags_to_the_client_as_options(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    recorder = Recorder()
    monkeypatch.setattr(submit_command, "make_client", lambda _url: recorder)
    data = tmp_path / "d.jsonl"
    data.write_text("{}\n", encoding="utf-8")
    args = ["--validator", "batched", "--rubric-model", "w", "--samples", "2", "--template", "x"]
    result = CliRunner().invoke(
        main, ["run", "gecko-image", str(data), "--dry-run", "--json", *args]
    )
    assert result.exit_code == 0, result.output
    ((metric, job),) = recorder.calls
    assert metric == "gecko-image"
    assert job["options"] == {
        "validator": "batched",
        "rubric_model": "w",
        "template": "x",
        "samples": 2,
    }
    refused = CliRunner().invoke(main, ["run", "pointwise", str(data), "--samples", "0"])
    assert refused.exit_code == 2 and "--samples" in refused.output
    assert json.loads(result.output) == {}


def test_a_flag_of_another_metric_is_refused_naming_the_metric_and_what_it_takes() -> None:
    """Kept, `evalq run pointwise --validator batched` was stored and silently ignored."""
    with pytest.raises(DatasetError) as caught:
        validate_options(
            "pointwise", {"template": "fluency", "validator": "batched", "questions": "extend"}
        )
    assert str(caught.value) == (
        "pointwise does not take --validator, --questions (options of gecko-image, "
        "gecko-video, rubric); pointwise takes --human, --samples, --template"
    )
    assert validate_options("gecko-image", {"validator": "batched"}) == {"validator": "batched"}


def test_run_refuses_another_metrics_flag_in_one_line_and_stores_nothing(
    scratch_url: str, tmp_path: Path
) -> None:
    """The command as a user runs it (its exit codes are cli_entry's)."""
    import os
    import subprocess
    import sys

    from redis import Redis

    data = tmp_path / "d.jsonl"
    data.write_text('{"prompt": "p", "response": "r"}\n', encoding="utf-8")
    flags = ["--template", "fluency", "--validator", "batched", "--redis-url", scratch_url]
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path), "EVALQ_API_KEY": ""}
    for dry_run in ([], ["--dry-run"]):
        refused = subprocess.run(
            [sys.executable, "-m", "evalq", "run", "pointwise", str(data), *flags, *dry_run],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr.splitlines() == [
            "error: pointwise does not take --validator (options of gecko-image, gecko-video, rubric); "
            "pointwise takes --human, --samples, --template"
        ]
    assert Redis.from_url(scratch_url).dbsize() == 0
