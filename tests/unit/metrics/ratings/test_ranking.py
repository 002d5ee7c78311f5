"""Ranking metric logic with in-memory judges: every pair in both orders, Bradley-Terry in
summarize, candidate checks, and generated candidates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalq.core.dataset import load_dataset
from evalq.core.errors import DatasetError, InputError
from evalq.core.judge import JudgeRequest
from evalq.examples.ratings import write_rank_example
from tests.support.datasets import write_rows
from tests.support.metric_harness import Harness, MemoryJudge, simulated
from tests.support.ranking_rows import CANDIDATES, NAMES, by_level, level_rows
from tests.support.rating_replies import choice


def test_every_pair_is_judged_in_both_orders_as_units(tmp_path: Path) -> None:
    judge = by_level()
    harness = Harness("rank", CANDIDATES, {judge.model: judge})
    (row,) = harness.load(level_rows(tmp_path, 1)).rows
    plan, _, result = harness.run_row(row)
    assert [(u.a, u.b, u.order) for u in plan.units] == [
        (a, b, order)
        for a, b in (("first", "second"), ("first", "third"), ("second", "third"))
        for order in ("original", "swapped")
    ]
    assert len(judge.requests) == 6
    assert result.details["points"] == {"first": 1.0, "second": 2.0, "third": 0.0}
    assert [e["winner"] for e in result.details["comparisons"]] == ["second", "first", "second"]
    assert (result.status, result.score) == ("scored", 1.0)


def test_summary_recovers_the_known_order_with_intervals(tmp_path: Path) -> None:
    judge = by_level()
    harness = Harness("rank", CANDIDATES, {judge.model: judge})
    _, summary = harness.run(harness.load(level_rows(tmp_path, 8)).rows)
    assert summary["ranking"] == "second > first > third"
    assert list(summary["strength"]) == ["second", "first", "third"]
    for name, (low, high) in summary["strength_ci95"].items():
        assert low - 1e-9 <= summary["strength"][name] <= high + 1e-9
    assert summary["rank_ci95"]["second"] == [1, 1]
    assert summary["win_matrix"] == {
        "second vs first": 1.0,
        "second vs third": 1.0,
        "first vs third": 1.0,
    }
    assert (summary["rows_ranked"], summary["comparisons"]) == (8, 24)
    assert summary["inconsistency_rate"] == 0.0
    assert (summary["bootstrap"], summary["seed"]) == (200, 0)


def test_position_biased_judge_ties_everything(tmp_path: Path) -> None:
    biased = MemoryJudge("first-wins", lambda request: choice("A"))
    harness = Harness("rank", CANDIDATES, {biased.model: biased})
    results, summary = harness.run(harness.load(level_rows(tmp_path, 4)).rows)
    assert summary["inconsistency_rate"] == 1.0
    assert all(r.score == 0.0 for r in results)  # no comparison survived the swap
    assert summary["strength"] == pytest.approx(dict.fromkeys(NAMES, 1 / 3))


def test_a_candidate_that_is_no_column_fails_before_enqueueing(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as caught:
        load_dataset(level_rows(tmp_path, 2), "rank", {"candidates": ["first", "fourth"]})
    assert "'fourth'" in str(caught.value)
    assert "first, prompt, second, third" in str(caught.value)
    with pytest.raises(DatasetError, match="at least two"):
        load_dataset(level_rows(tmp_path, 2), "rank", {"candidates": ["first"]})


def test_rows_missing_a_candidate_fail_alone(tmp_path: Path) -> None:
    data = write_rows(
        tmp_path / "d.jsonl",
        [{"id": "ok", "prompt": "q", "x": "a", "y": "b"}, {"id": "short", "prompt": "q", "x": "a"}],
    )
    loaded = load_dataset(data, "rank", {"candidates": ["x", "y"]})
    assert any("row short" in w for w in loaded.warnings)
    judge = by_level()
    harness = Harness("rank", {"candidates": ["x", "y"]}, {judge.model: judge})
    with pytest.raises(InputError, match="candidate"):
        harness.run_row(loaded.rows[1])


def test_guidance_variants_are_generated_by_the_model_under_test(tmp_path: Path) -> None:
    data = write_rows(
        tmp_path / "d.jsonl",
        [{"id": "q", "prompt": "How do bees share flower locations?", "context": "Bees dance."}],
    )
    options = {
        "candidates": ["terse", "thorough"],
        "candidate_prompts": {"terse": "Answer in one word.", "thorough": "Answer thoroughly."},
        "candidate_model": "model-under-test",
    }
    writer = MemoryJudge(
        "model-under-test",
        lambda request: (
            "level 3." if "thoroughly" in str(request.system_instruction) else "level 1."
        ),
    )
    judge = by_level()
    harness = Harness("rank", options, {judge.model: judge}, {writer.model: writer})
    (row,) = harness.load(data).rows
    plan, _, result = harness.run_row(row)
    assert plan.generated == {"terse": "level 1.", "thorough": "level 3."}
    assert len(writer.requests) == 2
    guidance = [r.system_instruction for r in writer.requests]
    assert guidance == ["Answer in one word.", "Answer thoroughly."]
    for request in writer.requests:  # the question is the user's, to be answered, not material
        assert request.prompt == "How do bees share flower locations?\n\nContext:\nBees dance."
        assert "<untrusted" not in request.prompt
    assert result.details["points"] == {"terse": 0.0, "thorough": 1.0}


def test_models_as_candidates_with_a_prompt_template(tmp_path: Path) -> None:
    data = write_rows(tmp_path / "d.jsonl", [{"id": "q", "prompt": "Why?"}])
    options = {"candidates": ["model-x", "model-y"], "prompt_template": "Answer: {prompt}"}
    level = {"model-x": 1, "model-y": 2}

    def writer(model: str) -> MemoryJudge:
        return MemoryJudge(model, lambda request: f"{model} says level {level[model]}.")

    writers = {m: writer(m) for m in level}
    judge = by_level()
    harness = Harness("rank", options, {judge.model: judge}, writers)
    (row,) = harness.load(data).rows
    _, _, result = harness.run_row(row)
    assert writers["model-x"].requests[0].prompt == "Answer: Why?"
    assert result.details["points"] == {"model-x": 0.0, "model-y": 1.0}
    with pytest.raises(DatasetError, match=r"\{missing\}"):
        load_dataset(data, "rank", {**options, "prompt_template": "Answer {missing}"})


def test_simulated_judge_ranks_cited_above_moderate_above_terse(tmp_path: Path) -> None:
    sim = MemoryJudge("sim", simulated)
    options = {"candidates": ["terse", "moderate", "cited"], "bootstrap": 200}
    harness = Harness("rank", options, {"sim": sim})
    _, summary = harness.run(harness.load(write_rank_example(tmp_path)).rows)
    assert summary["ranking"] == "cited > moderate > terse"
    assert summary["inconsistency_rate"] == 0.0


def test_several_judges_each_get_their_own_ranking_and_agreement(tmp_path: Path) -> None:
    judge = by_level()

    def contrary_reply(request: JudgeRequest) -> str:
        verdict = json.loads(judge.reply(request))["pairwise_choice"]
        return choice({"A": "B", "B": "A"}.get(verdict, "SAME"))

    contrary = MemoryJudge("contrary", contrary_reply)
    harness = Harness("rank", CANDIDATES, {judge.model: judge, contrary.model: contrary})
    results, summary = harness.run(harness.load(level_rows(tmp_path, 3)).rows)
    assert len(results[0].questions) == 2 * 3 * 2  # judges x pairs x orders
    assert summary["ranking_by_judge"] == {
        "by-level": "second > first > third",
        "contrary": "third > first > second",
    }
    assert summary["agreement"]["all_agree"] == 0.0
    assert summary["agreement"]["rows_compared"] == 9  # rows x pairs


def test_simulated_model_under_test_answers_guidance_variants(tmp_path: Path) -> None:
    from evalq.examples.ratings import BEES, TIDES

    data = write_rows(
        tmp_path / "d.jsonl",
        [
            {"id": "tides", "prompt": "What causes spring and neap tides?", "context": TIDES},
            {"id": "bees", "prompt": "How do worker bees' jobs change?", "context": BEES},
        ],
    )
    options = {
        "candidates": ["one-line", "thorough"],
        "candidate_prompts": {
            "one-line": "Answer in a single sentence.",
            "thorough": "Give a thorough, detailed answer.",
        },
        "candidate_model": "sim-writer",
        "bootstrap": 50,
    }
    writer, judge = MemoryJudge("sim-writer", simulated), MemoryJudge("sim", simulated)
    harness = Harness("rank", options, {"sim": judge}, {"sim-writer": writer})
    results, summary = harness.run(harness.load(data).rows)
    generated = results[0].details["generated"]
    assert generated["one-line"].count(".") < generated["thorough"].count(".")
    assert "spring tides" in generated["one-line"]  # the sentence that best answers it
    assert summary["ranking"] == "thorough > one-line"


def test_generation_request_puts_guidance_in_the_system_instruction() -> None:
    from evalq.core.judge import MediaPart
    from evalq.metrics.ranking.prompts import generation_request
    from evalq.metrics.ratings.documents import DocumentView

    values = {"prompt": "Why do tides turn?", "context": "The moon pulls the sea."}
    text_doc = DocumentView(text="Tide tables.", media=(), mime_type="text/plain")
    request = generation_request("  Answer in one sentence. ", values, text_doc)
    assert request.system_instruction == "Answer in one sentence."
    assert request.prompt == (
        "Why do tides turn?\n\nContext:\nThe moon pulls the sea.\n\nDocument:\nTide tables."
    )
    pdf = MediaPart(mime_type="application/pdf", data=b"%PDF-1.4")
    attached = generation_request(
        "Be thorough.", {"prompt": "Why?"}, DocumentView(None, (pdf,), "application/pdf")
    )
    assert (attached.prompt, attached.media) == ("Why?", (pdf,))
    for r in (request, attached):
        told = f"{r.system_instruction}\n{r.prompt}".lower()
        assert "<untrusted" not in told
        assert "ignore" not in told and "material" not in told
