"""Were the sides judged alike (evalq.comparisons.setups)? Every setting known on both sides
that differs is one line naming each side's value; a setting unknown on a side is not
compared; a side's versions are those its own rows were judged by; question sets differ only
where a prompt both sides have was asked other questions. Pure: setups by hand."""

from __future__ import annotations

from typing import Any

from evalq.comparisons.align import Side
from evalq.comparisons.comparison import compare_sides, comparison_dict
from evalq.comparisons.leaderboard import leaderboard, leaderboard_dict
from evalq.comparisons.setups import question_set_difference, setup_differences, side_setup
from evalq.core.models import RowResult

V1 = "evalq-fake-gemini/simulated-judge@1"
V2 = "evalq-fake-gemini/simulated-judge@2"


def setup(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "judge_models": ["flash"],
        "model_versions": {"flash": V1},
        "thinking": {"judge": "min", "rubric": "modest", "validator": "min"},
        "templates": {"rubric": "gecko-image-rubric/2", "validator": "gecko-image-validator/1"},
        "validator": "per-question",
        "rubric_model": "flash",
        "soft": False,
    }
    return {**base, **changes}


def lines(setups: dict[str, dict[str, Any]]) -> list[str]:
    return [d.line() for d in setup_differences(setups)]


def test_sides_judged_alike_have_no_difference() -> None:
    assert setup_differences({"a": setup(), "b": setup()}) == []
    assert setup_differences({"a": setup()}) == []  # one side: nothing to compare


def test_another_version_of_the_same_alias_is_named_with_both_values() -> None:
    found = setup_differences({"a": setup(), "b": setup(model_versions={"flash": V2})})
    assert [d.line() for d in found] == [
        f"sides differ in judge model version (flash): a={V1}, b={V2}"
    ]
    assert found[0].as_dict() == {
        "setting": "model_versions",
        "what": "judge model version (flash)",
        "values": {"a": V1, "b": V2},
        "line": found[0].line(),
    }


def test_each_setting_that_differs_is_a_line_of_its_own_in_a_fixed_order() -> None:
    b = setup(
        judge_models=["flash", "pro"],
        thinking={"judge": "min", "rubric": 2048, "validator": "min"},
        templates={"rubric": "gecko-image-rubric/3", "validator": "gecko-image-validator/1"},
        validator="batched",
        soft=True,
    )
    assert lines({"a": setup(), "b": b}) == [
        "sides differ in judge models: a=flash, b=flash, pro",
        "sides differ in prompt template (rubric): a=gecko-image-rubric/2, b=gecko-image-rubric/3",
        "sides differ in thinking (rubric): a=modest, b=2048",
        "sides differ in validator mode: a=per-question, b=batched",
        "sides differ in soft scoring: a=off, b=on",
    ]


def test_what_a_side_does_not_know_is_not_compared() -> None:
    old = {"judge_models": ["flash"]}  # a job from before versions and templates were kept
    assert lines({"a": setup(), "b": old}) == []
    # A judge model only one side ran has no version line of its own: the judge models line
    # says so.
    b = setup(judge_models=["flash", "pro"])
    b["model_versions"] = {"flash": V1, "pro": "pro-001"}
    assert lines({"a": setup(), "b": b}) == ["sides differ in judge models: a=flash, b=flash, pro"]
    # A metric's own setting is compared by its key, when both sides have it.
    assert lines({"a": setup(samples=1, depth=2), "b": setup(samples=3, depth=2)}) == [
        "sides differ in samples: a=1, b=3"
    ]
    assert lines({"a": setup(depth_limit=2), "b": setup(depth_limit=4)}) == [
        "sides differ in depth limit: a=2, b=4"
    ]


def test_three_sides_name_every_sides_value() -> None:
    setups = {"a": setup(), "b": setup(), "c": setup(model_versions={"flash": V2})}
    assert lines(setups) == [f"sides differ in judge model version (flash): a={V1}, b={V1}, c={V2}"]


def setup_row(line: int, versions: dict[str, str], question_set: str | None = None) -> RowResult:
    return RowResult(
        id=str(line),
        line=line,
        prompt=f"p{line}",
        status="scored",
        score=0.5,
        model_versions=versions,
        question_set=question_set,
    )


def test_a_side_is_judged_by_the_versions_its_own_rows_saw() -> None:
    job = setup(model_versions={"flash": f"{V1},{V2}"})  # the alias moved mid-job
    assert side_setup(job, [setup_row(1, {"flash": V1})])["model_versions"] == {"flash": V1}
    assert side_setup(job, [setup_row(2, {"flash": V2})])["model_versions"] == {"flash": V2}
    assert side_setup({}, [setup_row(1, {})]) == {"model_versions": {}}


def side_asking(label: str, job_set: str | None, sets: dict[int, str | None]) -> Side:
    rows = [setup_row(line, {}, fingerprint) for line, fingerprint in sets.items()]
    return Side(label, rows, question_set=job_set)


def test_question_sets_differ_only_where_a_shared_prompt_was_asked_other_questions() -> None:
    a = side_asking("a", "job-a", {1: "q1", 2: "q2", 3: "q3"})
    # b lacks prompt 3's row and failed prompt 2's before its rubric: its job's fingerprint
    # differs, yet every prompt both asked was asked the same questions.
    b = side_asking("b", "job-b", {1: "q1", 2: None})
    assert question_set_difference([a, b]) is None
    rewritten = side_asking("c", "job-c", {1: "q1-new", 2: "q2", 3: "q3"})
    found = question_set_difference([a, rewritten])
    assert found is not None and found.line() == (
        "sides differ in question set (1 of 3 shared prompts asked other questions): "
        "a=job-a, c=job-c"
    )
    assert question_set_difference([a, side_asking("d", None, {1: "q1-new"})]) is None  # unknown
    assert question_set_difference([a, side_asking("e", "job-a", {1: "q1"})]) is None  # the same


def sides_with(version_b: str) -> list[Side]:
    rows_a = [setup_row(i, {"flash": V1}) for i in range(1, 5)]
    rows_b = [setup_row(i, {"flash": version_b}) for i in range(1, 5)]
    return [
        Side("a", rows_a, job_id="ja", setup=side_setup(setup(), rows_a)),
        Side("b", rows_b, job_id="jb", setup=side_setup(setup(), rows_b)),
    ]


def test_a_comparison_carries_its_differences_into_json_and_the_leaderboard() -> None:
    mixed = compare_sides(sides_with(V2))
    assert mixed.mixed
    data = comparison_dict(mixed)
    assert data["mixed"] is True
    assert [d["line"] for d in data["setup_differences"]] == [
        f"sides differ in judge model version (flash): a={V1}, b={V2}"
    ]
    assert data["sides"][1]["judge_setup"]["model_versions"] == {"flash": V2}
    board = leaderboard_dict(mixed, leaderboard(mixed))
    assert board["mixed"] is True and board["setup_differences"] == data["setup_differences"]
    alike = compare_sides(sides_with(V1))
    assert not alike.mixed and comparison_dict(alike)["setup_differences"] == []
