"""Thinking per role (evalq.core.thinking): the model-family table, what is refused before a job is
enqueued, what each role sends, and the room left for the answer. Pure functions and an
in-memory judge; the HTTP side is in tests/integration/metrics/test_pipeline_thinking.py."""

from __future__ import annotations

import pytest

from evalq.core.judge import JudgeRequest, Thinking
from evalq.core.thinking import (
    DEFAULTS,
    ThinkingError,
    ThinkingJudge,
    apply,
    check,
    check_job,
    effective,
    family_of,
    output_allowance,
    parse_assignments,
    parse_settings,
    resolve,
)
from evalq.worker.judges.call_cache import call_digest
from tests.support.judges import ListJudge


@pytest.mark.parametrize(
    ("model", "prefix"),
    [
        ("gemini-2.5-flash", "gemini-2.5-flash"),
        ("models/gemini-2.5-flash-lite-preview-09-2025", "gemini-2.5-flash-lite"),
        ("projects/p/locations/l/publishers/google/models/gemini-2.5-pro", "gemini-2.5-pro"),
        ("gemini-3-pro-preview", "gemini-3-pro"),
        ("gemini-3.5-flash", "gemini-3"),
        ("gemini-2.0-flash", "gemini-2.0"),
    ],
)
def test_families_match_the_longest_prefix(model: str, prefix: str) -> None:
    family = family_of(model)
    assert family is not None and family.prefix == prefix


def test_defaults_think_as_little_as_the_model_allows() -> None:
    assert DEFAULTS == {
        "rubric": "modest",
        "validator": "min",
        "judge": "min",
        "candidate": "default",
    }
    assert resolve("min", "gemini-2.5-flash") == Thinking(budget=0)
    assert resolve("min", "gemini-2.5-flash-lite") == Thinking(budget=0)
    assert resolve("min", "gemini-2.5-pro") == Thinking(budget=128)  # can't be switched off
    assert resolve("min", "gemini-3-pro-preview") == Thinking(level="low")
    assert resolve("min", "gemini-3-flash-preview") == Thinking(level="minimal")
    assert resolve("modest", "gemini-2.5-flash") == Thinking(budget=1024)
    assert resolve("modest", "gemini-3-pro-preview") == Thinking(level="low")
    assert resolve("default", "gemini-2.5-flash") is None  # the model's own default
    assert resolve("min", "gemini-2.0-flash") is None  # does not think
    assert resolve("min", "some-other-model") is None  # unknown: nothing sent
    assert resolve(300, "some-other-model") == Thinking(budget=300)  # as given


@pytest.mark.parametrize(
    ("model", "setting", "expected"),
    [
        ("gemini-2.5-pro", 0, "gemini-2.5-pro takes -1 (dynamic) or 128..32768; got 0"),
        ("gemini-2.5-pro", 40000, "gemini-2.5-pro takes -1 (dynamic) or 128..32768; got 40000"),
        ("gemini-2.5-flash", 24577, "gemini-2.5-flash takes 0 (off), -1 (dynamic) or 1..24576"),
        ("gemini-2.5-flash-lite", 100, "takes 0 (off), -1 (dynamic) or 512..24576; got 100"),
        ("gemini-2.5-flash", "high", "gemini-2.5-flash takes a thinking budget, not a level"),
        ("gemini-3-pro-preview", "minimal", "gemini-3-pro-preview takes levels low, high"),
        ("gemini-2.0-flash", 512, "gemini-2.0-flash takes no thinking configuration"),
    ],
)
def test_refused_at_submit_naming_model_and_range(
    model: str, setting: int | str, expected: str
) -> None:
    with pytest.raises(ThinkingError) as caught:
        check("validator", setting, model)
    assert expected in str(caught.value)
    assert "validator" in str(caught.value)


@pytest.mark.parametrize(
    ("model", "setting"),
    [
        ("gemini-2.5-flash", 0),
        ("gemini-2.5-flash", -1),
        ("gemini-2.5-flash", 24576),
        ("gemini-2.5-pro", 128),
        ("gemini-2.5-flash-lite", 0),
        ("gemini-2.5-flash-lite", 512),
        ("gemini-3-flash-preview", "minimal"),
        ("gemini-2.5-pro", "min"),
    ],
)
def test_allowed_settings_pass_quietly(model: str, setting: int | str) -> None:
    assert check("validator", setting, model) == []


def test_unknown_models_pass_through_with_a_warning() -> None:
    (warning,) = check("judge", 2048, "my-tuned-judge")
    assert "my-tuned-judge" in warning and "sent as given" in warning
    (warning,) = check("judge", "min", "my-tuned-judge")
    assert "not sent" in warning
    assert check("candidate", "default", "my-tuned-judge") == []


def test_a_job_is_checked_for_every_model_of_every_role() -> None:
    thinking = effective({"judge": 100})
    with pytest.raises(ThinkingError, match=r"gemini-2\.5-pro"):
        check_job(thinking, {"judge": ["gemini-2.5-flash", "gemini-2.5-pro"]})


def test_settings_and_flags_are_read_strictly() -> None:
    assert parse_settings({"validator": "0", "rater": "LOW"}) == {"validator": 0, "judge": "low"}
    assert parse_assignments(["validator=0", "rubric=2048"], kind="budget") == {
        "validator": 0,
        "rubric": 2048,
    }
    assert parse_assignments(["judge=low"], kind="level") == {"judge": "low"}
    for bad, kind in (
        (["validator"], "budget"),
        (["writer=5"], "budget"),
        (["judge=lots"], "budget"),
        (["judge=high"], "budget"),
        (["judge=512"], "level"),
    ):
        with pytest.raises(ThinkingError):
            parse_assignments(bad, kind=kind)  # type: ignore[arg-type]
    assert effective({"validator": 0}, {"validator": 64})["validator"] == 64  # flags win


def test_output_leaves_room_for_the_answer_after_the_thinking() -> None:
    assert output_allowance(4096, Thinking(budget=0), "gemini-2.5-flash") == 4096
    assert output_allowance(4096, Thinking(budget=1024), "gemini-2.5-flash") == 5120
    assert output_allowance(4096, None, "gemini-2.5-flash") == 4096 + 8192  # dynamic default
    assert output_allowance(4096, None, "gemini-2.5-flash-lite") == 4096  # does not think
    assert output_allowance(4096, Thinking(budget=-1), "gemini-2.5-pro") == 4096 + 32768
    assert output_allowance(60000, Thinking(budget=32768), "gemini-2.5-pro") == 65535
    assert output_allowance(4096, None, "unknown-model") == 4096


def test_apply_gives_each_role_its_own_thinking() -> None:
    thinking = effective({})
    validator = apply(JudgeRequest(prompt="q", role="validator"), thinking, "gemini-2.5-pro", 4096)
    rubric = apply(JudgeRequest(prompt="q", role="rubric"), thinking, "gemini-2.5-pro", 4096)
    candidate = apply(JudgeRequest(prompt="q", role="candidate"), thinking, "gemini-2.5-pro", 4096)
    assert (validator.thinking, validator.max_output_tokens) == (Thinking(budget=128), 4224)
    assert (rubric.thinking, rubric.max_output_tokens) == (Thinking(budget=1024), 5120)
    assert (candidate.thinking, candidate.max_output_tokens) == (None, 4096 + 8192)
    # the thinking is part of the call-cache key
    assert len({call_digest("gemini-2.5-pro", r) for r in (validator, rubric, candidate)}) == 3


def test_thinking_judge_fills_in_requests_and_forces_the_candidate_role() -> None:
    inner = ListJudge(["a", "b"], model="gemini-2.5-flash")
    thinking = effective({"validator": 0, "candidate": 2048})
    ThinkingJudge(inner, thinking, 512).generate(JudgeRequest(prompt="q", role="validator"))
    ThinkingJudge(inner, thinking, 512, role="candidate").generate(JudgeRequest(prompt="q"))
    validator, candidate = inner.requests
    assert (validator.thinking, validator.max_output_tokens) == (Thinking(budget=0), 512)
    assert candidate.role == "candidate"
    assert (candidate.thinking, candidate.max_output_tokens) == (Thinking(budget=2048), 2560)
