"""Pairwise metric logic with in-memory judges: both orders, position bias cancelled,
Wilson intervals, several judges, and the simulated judge's choices."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalq.core.dataset import load_dataset
from evalq.core.judge import JudgeRequest
from evalq.core.metric import get_metric
from evalq.core.models import RowInput
from evalq.examples.ratings import write_pairwise_example
from evalq.metrics.pairwise.comparisons import combine, first_position_share, winner_of
from evalq.stats.intervals import wilson
from tests.support.datasets import write_rows
from tests.support.metric_harness import Harness, MemoryJudge, simulated
from tests.support.prompts import extract_section
from tests.support.rating_replies import choice


def rows(*pairs: tuple[str, str]) -> list[RowInput]:
    return [
        RowInput(
            id=f"r{i}",
            line=i + 1,
            prompt="Which is better?",
            data={"prompt": "Which is better?", "response_a": a, "response_b": b},
        )
        for i, (a, b) in enumerate(pairs)
    ]


def prefers_judge(word: str) -> MemoryJudge:
    """A judge without position bias: it picks whichever shown response contains ``word``."""

    def reply(request: JudgeRequest) -> str:
        first = extract_section(request.prompt, "response_a") or ""
        second = extract_section(request.prompt, "response_b") or ""
        if (word in first) == (word in second):
            return choice("SAME")
        return choice("A" if word in first else "B")

    return MemoryJudge(f"prefers-{word}", reply)


@pytest.mark.parametrize(
    ("original", "swapped", "outcome", "consistent"),
    [
        ("A", "B", "A", True),
        ("B", "A", "B", True),
        ("SAME", "SAME", "tie", True),
        ("A", "A", "tie", False),  # always the first position
        ("B", "B", "tie", False),  # always the second position
        ("A", "SAME", "tie", False),
        ("SAME", "A", "tie", False),
        (None, "A", None, None),
        ("A", None, None, None),
    ],
)
def test_combining_both_orders(
    original: str | None, swapped: str | None, outcome: str | None, consistent: bool | None
) -> None:
    combined = combine(original, swapped)  # type: ignore[arg-type]
    assert (combined.outcome, combined.consistent) == (outcome, consistent)


def test_each_comparison_is_asked_in_both_orders() -> None:
    judge = prefers_judge("good")
    plan, _, row = Harness("pairwise", {}, {judge.model: judge}).run_row(
        rows(("good answer", "poor answer"))[0]
    )
    assert [u.order for u in plan.units] == ["original", "swapped"]
    shown = [
        (extract_section(r.prompt, "response_a"), extract_section(r.prompt, "response_b"))
        for r in judge.requests
    ]
    assert shown == [("good answer", "poor answer"), ("poor answer", "good answer")]
    assert [r.temperature for r in judge.requests] == [0.0, 0.0]
    assert row.details["comparisons"][0] | {"explanations": None} == {
        "judge": judge.model,
        "sample": 0,
        "original": "A",
        "swapped": "B",
        "outcome": "A",
        "consistent": True,
        "explanations": None,
    }
    assert (row.score, row.details["winner"], row.status) == (1.0, "A", "scored")


def test_a_judge_that_always_prefers_the_first_position_yields_inconsistent_ties() -> None:
    biased = MemoryJudge("first-position", lambda request: choice("A"))
    results, summary = Harness("pairwise", {}, {biased.model: biased}).run(
        rows(("good", "poor"), ("poor", "good"), ("x", "y"))
    )
    assert [r.details["winner"] for r in results] == ["tie", "tie", "tie"]
    assert all(r.score == 0.5 for r in results)
    assert all(r.details["inconsistent"] == 1 for r in results)
    assert summary["win_rates"] == {"A": 0.0, "B": 0.0, "tie": 1.0}
    assert summary["inconsistency_rate"] == 1.0
    assert summary["first_position_share"] == 1.0


def test_win_rates_with_wilson_intervals() -> None:
    judge = prefers_judge("good")
    pairs = [("good", "poor")] * 6 + [("poor", "good")] * 3 + [("good", "good")]
    results, summary = Harness("pairwise", {}, {judge.model: judge}).run(rows(*pairs))
    assert summary["win_rates"] == {"A": 0.6, "B": 0.3, "tie": 0.1}
    assert summary["win_rates_ci95"]["A"] == pytest.approx(list(wilson(6, 10) or ()))
    assert summary["inconsistency_rate"] == 0.0
    assert summary["first_position_share"] == 0.5
    assert summary["rows_compared"] == 10
    assert [r.score for r in results][-1] == 0.5


def test_wilson_interval_matches_known_values() -> None:
    low, high = wilson(6, 10) or (0.0, 0.0)
    assert (round(low, 4), round(high, 4)) == (0.3127, 0.8318)
    low, high = wilson(0, 10) or (1.0, 1.0)
    assert (low, round(high, 4)) == (0.0, 0.2775)
    assert wilson(0, 0) is None


def test_an_unscored_order_leaves_the_comparison_unscored() -> None:
    replies = iter([choice("A"), "I cannot decide."])
    judge = MemoryJudge("j", lambda request: next(replies))
    _, verdicts, row = Harness("pairwise", {}, {"j": judge}).run_row(rows(("a", "b"))[0])
    assert [v.status for v in verdicts.values()] == ["ok", "unscored"]
    assert (row.status, row.score, row.reason) == ("failed", None, "parse_error")
    assert row.details["comparisons"][0]["reason"] == "parse_error"
    assert get_metric("pairwise").summarize([row]) == {}


def test_several_judges_samples_and_their_agreement() -> None:
    good, biased = prefers_judge("good"), MemoryJudge("biased", lambda request: choice("B"))
    harness = Harness("pairwise", {"samples": 2}, {good.model: good, biased.model: biased})
    results, summary = harness.run(rows(("good", "poor"), ("poor", "good")))
    assert len(results[0].questions) == 2 * 2 * 2  # judges x samples x orders
    assert {r.temperature for r in good.requests} == {0.7}
    assert results[0].details["judges"][good.model]["winner"] == "A"
    assert results[0].details["judges"]["biased"] == {
        "score": 0.5,
        "winner": "tie",
        "inconsistent": 2,
    }
    assert results[0].score == 0.75  # mean of the judges' scores
    assert summary["by_judge"]["biased"]["inconsistency_rate"] == 1.0
    assert summary["by_judge"][good.model]["tie"] == 0.0
    assert summary["agreement"]["all_agree"] == 0.0


def test_winner_and_position_share_helpers() -> None:
    assert [winner_of(s) for s in (1.0, 0.75, 0.5, 0.25)] == ["A", "A", "tie", "B"]
    assert first_position_share([{"original": "A", "swapped": "B"}]) == 0.5
    assert first_position_share([{"original": "SAME", "swapped": "SAME"}]) is None


def test_simulated_judge_picks_the_better_answer_in_either_order(tmp_path: Path) -> None:
    sim = MemoryJudge("sim", simulated)
    harness = Harness("pairwise", {}, {"sim": sim})
    loaded = harness.load(write_pairwise_example(tmp_path))
    assert not loaded.errors
    results, summary = harness.run(loaded.rows)
    for row in results:
        expected = {"a-better": "A", "b-better": "B", "same": "tie"}[row.id.rsplit("-", 1)[0]]
        assert row.details["winner"] == expected, row.id
        assert row.details["inconsistent"] == 0  # no built-in position preference
    assert summary["first_position_share"] == 0.5
    explanations = results[0].details["comparisons"][0]["explanations"]
    assert explanations["original"].startswith("[simulated judge]")


def vertex_pairwise_rows(tmp_path: Path) -> Path:
    """Vertex's pairwise columns: `response` is the candidate, `baseline_model_response` the
    baseline. The candidate is the better answer in rows c*, the baseline in row b1."""
    rows = [
        {"id": "c1", "prompt": "Q?", "response": "good answer", "baseline_model_response": "x"},
        {"id": "c2", "prompt": "Q?", "response": "a good one", "baseline_model_response": "y"},
        {"id": "b1", "prompt": "Q?", "response": "z", "baseline_model_response": "good"},
    ]
    path = tmp_path / "vertex.jsonl"
    write_rows(path, rows)
    return path


def test_vertex_columns_run_with_the_candidate_as_a_and_the_baseline_as_b(tmp_path: Path) -> None:
    judge = prefers_judge("good")
    harness = Harness("pairwise", {}, {judge.model: judge})
    loaded = harness.load(vertex_pairwise_rows(tmp_path))
    assert not loaded.errors and not loaded.warnings
    results, summary = harness.run(loaded.rows)
    assert [(r.id, r.details["winner"]) for r in results] == [("c1", "A"), ("c2", "A"), ("b1", "B")]
    first = judge.requests[0].prompt  # the original order shows the candidate as Response A
    assert extract_section(first, "response_a") == "good answer"
    assert extract_section(first, "response_b") == "x"
    sides = {"A": "candidate (response)", "B": "baseline (baseline_model_response)"}
    assert results[0].details["sides"] == sides
    assert summary["sides"] == sides
    assert summary["candidate_model_win_rate"] == pytest.approx(2 / 3)
    assert summary["baseline_model_win_rate"] == pytest.approx(1 / 3)
    assert summary["win_rates"]["A"] == pytest.approx(2 / 3)


def test_vertex_columns_load_from_csv_and_native_rows_keep_their_labels(tmp_path: Path) -> None:
    path = tmp_path / "vertex.csv"
    path.write_text('prompt,baseline_model_response,response\nQ?,"base","cand"\n')
    loaded = load_dataset(path, "pairwise", {})
    assert not loaded.errors
    assert loaded.rows[0].data == {
        "prompt": "Q?",
        "response": "cand",
        "baseline_model_response": "base",
    }
    judge = prefers_judge("good")
    results, summary = Harness("pairwise", {}, {judge.model: judge}).run(rows(("good", "bad")))
    assert results[0].details["sides"] == {"A": "response_a", "B": "response_b"}
    assert summary["sides"] == {"A": "response_a", "B": "response_b"}
    assert "candidate_model_win_rate" not in summary


def test_a_row_with_both_column_pairs_is_refused_naming_them(tmp_path: Path) -> None:
    path = tmp_path / "both.jsonl"
    record = {"prompt": "Q?", "response_a": "a", "response_b": "b", "response": "c"}
    path.write_text(
        json.dumps(record)
        + "\n"
        + json.dumps({"prompt": "Q?", "response_a": "a", "response_b": "b"})
        + "\n"
    )
    loaded = load_dataset(path, "pairwise", {})
    assert [r.id for r in loaded.rows] == ["2"]
    ((_, error),) = loaded.errors
    assert error.field == "response"
    assert "response_a" in error.message and "baseline_model_response" in error.message
