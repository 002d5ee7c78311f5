"""Pointwise, pairwise and rank jobs end to end: real Redis, real worker processes, the fake
Gemini server over HTTP (scripted replies or the simulated judge). Each test uses its own
judge model name so the call cache does not couple tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalq.core.errors import DatasetError
from evalq.examples.ratings import (
    write_pairwise_example,
    write_pointwise_example,
    write_rank_example,
)
from tests.conftest import FakeGemini, RedisServer, WorkerPool, worker_env
from tests.support.cli import evalq_stdout, run_evalq
from tests.support.datasets import write_rows
from tests.support.rating_replies import choice, rated_in_turn, rating

pytestmark = pytest.mark.integration


def run_judged(
    client: Any, metric: str, data: Path, judge_model: str, *, timeout_s: float = 60, **options: Any
) -> tuple[Any, dict[str, Any]]:
    """A job of `data` for `judge_model` with the metric `options`, waited for: its summary
    and its results by row id."""
    job = client.submit(metric, data, judge_model=judge_model, options=options).job_id
    summary = client.wait(job, timeout_s=timeout_s)
    return summary, {r.id: r for r in client.results(job)}


def prefers_rules(marker: str) -> list[dict[str, Any]]:
    """Script rules for a pairwise judge that picks the response holding `marker` whichever
    side it is shown on (the rules match the block each response is delimited in)."""
    return [
        {"match": f"kind=response_a>\n{marker}", "reply": choice("A")},
        {"match": f"kind=response_b>\n{marker}", "reply": choice("B")},
    ]


def test_pointwise_example_rates_faithful_summaries_higher(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    dataset = write_pointwise_example(tmp_path / "example")
    summary, rows = run_judged(
        client,
        "pointwise",
        dataset,
        "judge-ratings-example",
        timeout_s=120,
        template="summarization_quality",
    )
    assert summary.status == "finished"
    assert summary.rows_scored == summary.rows_total == 6
    assert summary.simulated and all(r.simulated for r in rows.values())
    for topic in ("tides", "bees", "volcanoes"):  # a context, a text document, a PDF document
        good, bad = rows[f"{topic}-good"], rows[f"{topic}-bad"]
        assert good.details["mean_rating"] > bad.details["mean_rating"], topic
        assert good.score is not None and bad.score is not None and good.score > bad.score
    stats = summary.metric_summary
    assert stats["template"] == "summarization_quality"
    assert 1.0 <= stats["mean_rating"] <= 5.0
    assert sum(stats["rating_counts"].values()) == 6
    assert summary.mean_score == pytest.approx((stats["mean_rating"] - 1) / 4)


def test_ratings_are_read_from_structured_replies_and_bad_ones_are_unscored(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    fake.script(
        [
            {"match": "Pw-fenced", "reply": f"```json\n{rating(4)}\n```"},
            {"match": "Pw-bare", "reply": "4"},
            {"match": "Pw-range", "reply": rating(7)},
            {"match": "Pw-zero", "reply": rating(0)},
            {"match": "Pw-prose", "reply": "A solid answer. Rating: 4"},
        ]
    )
    names = ("fenced", "bare", "range", "zero", "prose")
    data = write_rows(
        tmp_path / "d.jsonl", [{"id": n, "response": f"Pw-{n} response."} for n in names]
    )
    summary, rows = run_judged(client, "pointwise", data, "judge-ratings-parse", template="fluency")
    assert [rows[n].details["ratings"] for n in names] == [[4], [4], [], [], []]
    for n in ("range", "zero", "prose"):
        assert (rows[n].status, rows[n].score, rows[n].reason) == ("failed", None, "parse_error")
    assert "outside the scale" in (rows["range"].questions[0].detail or "")
    assert summary.unscored_by_reason == {"parse_error": 3}
    assert (summary.rows_scored, summary.rows_failed) == (2, 3)
    assert summary.mean_score == 0.75  # unscored rows are excluded, never counted as 0


def test_a_template_with_an_unknown_placeholder_fails_before_anything_is_enqueued(
    client: Any, redis_server: RedisServer, tmp_path: Path
) -> None:
    data = write_rows(tmp_path / "d.jsonl", [{"prompt": "p", "response": "r", "context": "c"}])
    template = tmp_path / "mine.txt"
    template.write_text("Does {response} follow {instructions}? Use {context}.")
    jobs_before = redis_server.client().zcard("evalq:jobs")
    with pytest.raises(DatasetError) as caught:
        client.submit("pointwise", data, options={"template_text": template.read_text()})
    assert "{instructions}" in str(caught.value)
    assert "context, prompt, response" in str(caught.value)
    done = run_evalq(
        worker_env(redis_server.url, "http://127.0.0.1:9"),
        "run",
        "pointwise",
        str(data),
        "--template",
        str(template),
    )
    assert done.returncode == 2
    assert "{instructions}" in done.stderr
    assert redis_server.client().zcard("evalq:jobs") == jobs_before


def test_repeated_samples_show_each_rating_their_mean_and_spread(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    fake.script([*rated_in_turn("Rs-spread", [5, 3, 4]), *rated_in_turn("Rs-steady", [2])])
    data = write_rows(
        tmp_path / "d.jsonl",
        [{"id": "spread", "response": "Rs-spread."}, {"id": "steady", "response": "Rs-steady."}],
    )
    summary, rows = run_judged(
        client, "pointwise", data, "judge-ratings-samples", template="fluency", samples=3
    )
    spread = rows["spread"].details
    assert sorted(spread["ratings"]) == [3, 4, 5]  # three calls, one per sample
    assert (spread["mean_rating"], spread["stdev"]) == (4.0, 1.0)
    assert rows["steady"].details["ratings"] == [2, 2, 2]
    assert rows["steady"].details["stdev"] == 0.0
    consistency = summary.metric_summary["consistency"]
    assert consistency == {"mean_stdev": 0.5, "unanimous_share": 0.5, "rows": 2}
    assert summary.judge_calls == 6


def test_several_judges_are_each_their_own_units_with_agreement(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    judges = ["judge-ratings-multi-a", "judge-ratings-multi-b"]
    dataset = write_pointwise_example(tmp_path / "example")
    job = client.submit(
        "pointwise", dataset, judge_models=judges, options={"template": "groundedness"}
    ).job_id
    summary = client.wait(job, timeout_s=120)
    rows = client.results(job)
    assert fake.stats()["by_model"] == dict.fromkeys(judges, 6)
    for row in rows:
        assert set(row.details["judges"]) == set(judges)
        assert len(row.questions) == 2
    stats = summary.metric_summary
    assert set(stats["mean_rating_by_judge"]) == set(judges)
    assert stats["agreement"]["rows_compared"] == 6
    assert stats["agreement"]["all_agree"] == 1.0  # the simulated judge does not vary by model


def test_pairwise_judges_both_orders_and_position_bias_becomes_inconsistent_ties(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    fake.script(
        [
            {"match": "Pb-bias", "reply": choice("A", "the first one, always")},
            *prefers_rules("Pb-good"),
        ]
    )
    rows = [
        {"id": "biased", "prompt": "q1", "response_a": "Pb-bias one.", "response_b": "Pb-bias 2."},
        {"id": "a-wins", "prompt": "q2", "response_a": "Pb-good.", "response_b": "Pb-poor."},
        {"id": "b-wins", "prompt": "q3", "response_a": "Pb-poor.", "response_b": "Pb-good."},
    ]
    data = write_rows(tmp_path / "d.jsonl", rows)
    summary, results = run_judged(client, "pairwise", data, "judge-pairwise-bias")
    assert [results[k].details["winner"] for k in ("biased", "a-wins", "b-wins")] == [
        "tie",
        "A",
        "B",
    ]
    assert [results[k].score for k in ("biased", "a-wins", "b-wins")] == [0.5, 1.0, 0.0]
    biased = results["biased"].details["comparisons"][0]
    assert (biased["original"], biased["swapped"], biased["consistent"]) == ("A", "A", False)
    stats = summary.metric_summary
    assert stats["win_rates"] == {"A": 1 / 3, "B": 1 / 3, "tie": 1 / 3}
    assert stats["inconsistency_rate"] == pytest.approx(1 / 3)
    low, high = stats["win_rates_ci95"]["A"]
    assert 0.0 < low < 1 / 3 < high < 1.0
    assert summary.judge_calls == 6  # two orders per row


def test_pairwise_example_with_the_simulated_judge(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    dataset = write_pairwise_example(tmp_path / "example")
    summary, results = run_judged(
        client, "pairwise", dataset, "judge-pairwise-example", timeout_s=120
    )
    for row in results.values():
        expected = {"a-better": "A", "b-better": "B", "same": "tie"}[row.id.rsplit("-", 1)[0]]
        assert row.details["winner"] == expected, row.id
    assert summary.metric_summary["inconsistency_rate"] == 0.0
    assert summary.metric_summary["first_position_share"] == 0.5


def test_rank_cli_recovers_a_scripted_order(
    redis_server: RedisServer, fake: FakeGemini, workers: WorkerPool, tmp_path: Path
) -> None:
    # The judge prefers the higher Rk level whichever side it is shown on.
    fake.script([*prefers_rules("Rk-3"), *prefers_rules("Rk-2")])
    rows = [
        {
            "id": f"q{i}",
            "prompt": f"Scripted question {i}?",
            "c1": f"Rk-2 answer {i}.",
            "c2": f"Rk-3 answer {i}.",
            "c3": f"Rk-1 answer {i}.",
        }
        for i in range(5)
    ]
    data = write_rows(tmp_path / "rank.jsonl", rows)
    env = worker_env(redis_server.url, fake.url)

    out = evalq_stdout(
        env,
        "rank",
        str(data),
        "--candidates",
        "c1,c2,c3",
        "--judge-model",
        "judge-rank-scripted",
        "--wait",
        "--json",
    )
    summary = json.loads(out)
    stats = summary["metric_summary"]
    assert stats["ranking"] == "c2 > c1 > c3"
    assert stats["win_matrix"] == {"c2 vs c1": 1.0, "c2 vs c3": 1.0, "c1 vs c3": 1.0}
    assert stats["rank_ci95"] == {"c2": [1, 1], "c1": [2, 2], "c3": [3, 3]}
    assert (stats["rows_ranked"], stats["comparisons"]) == (5, 15)
    assert summary["judge_calls"] == 30  # 3 pairs x 2 orders x 5 rows
    human = evalq_stdout(env, "status", summary["job_id"])
    assert "c2 > c1 > c3" in human
    assert "c2 vs c1=1.000" in human


def test_rank_example_puts_cited_first(client: Any, fake: FakeGemini, tmp_path: Path) -> None:
    dataset = write_rank_example(tmp_path / "example")
    candidates = ["terse", "moderate", "cited"]
    summary, _ = run_judged(
        client, "rank", dataset, "judge-rank-example", timeout_s=120, candidates=candidates
    )
    stats = summary.metric_summary
    assert stats["ranking"] == "cited > moderate > terse"
    low, high = stats["strength_ci95"]["cited"]
    assert low <= stats["strength"]["cited"] + 1e-9 and high >= stats["strength"]["cited"] - 1e-9
    assert summary.rows_scored == 6


def test_rank_generates_candidates_from_guidance_prompts_via_the_cli(
    redis_server: RedisServer, fake: FakeGemini, workers: WorkerPool, tmp_path: Path
) -> None:
    """Candidates that are not columns are written by the model under test from guidance
    prompts (as the seed ranks guidance prompts), then ranked with the column candidates."""
    dataset = write_rank_example(tmp_path / "rank")
    guidance = tmp_path / "guidance.json"
    guidance.write_text(
        json.dumps(
            {
                "brief": "Answer in one short sentence.",
                "thorough": "Answer thoroughly from the context, covering every cause it names.",
            }
        )
    )
    done = run_evalq(
        worker_env(redis_server.url, fake.url),
        "rank",
        str(dataset),
        "--candidates",
        "cited,brief,thorough",
        "--candidate-prompts",
        str(guidance),
        "--candidate-model",
        "rank-guidance-writer",
        "--judge-model",
        "rank-guidance-judge",
        "--wait",
        "--json",
        timeout_s=240,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    rows = summary["rows_total"]
    assert summary["rows_done"] == rows > 0
    assert summary["candidate_calls"] == 2 * rows  # two generated candidates per row, counted apart
    assert summary["candidate_output_tokens"] > 0
    ranking = summary["metric_summary"]["ranking"]
    assert all(name in ranking for name in ("cited", "brief", "thorough"))


def test_vertex_style_datasets_run_as_they_are(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    # Pairwise with Vertex's columns: `response` is the candidate (shown as A in the original
    # order), `baseline_model_response` the baseline. The scripted judge prefers Vx-good on
    # whichever side it is shown.
    fake.script(prefers_rules("Vx-good"))
    pairs = [
        {"id": "cand", "prompt": "q1", "response": "Vx-good.", "baseline_model_response": "Vx-x."},
        {"id": "base", "prompt": "q2", "response": "Vx-y.", "baseline_model_response": "Vx-good."},
    ]
    data = write_rows(tmp_path / "pairs.jsonl", pairs)
    summary, results = run_judged(client, "pairwise", data, "judge-vertex-pairs")
    assert summary.status == "finished" and summary.rows_scored == 2
    assert (results["cand"].score, results["base"].score) == (1.0, 0.0)
    stats = summary.metric_summary
    assert stats["sides"] == {
        "A": "candidate (response)",
        "B": "baseline (baseline_model_response)",
    }
    assert (stats["candidate_model_win_rate"], stats["baseline_model_win_rate"]) == (0.5, 0.5)

    # Summarisation with only prompt and response: the text to summarise is in the prompt.
    rows = [
        {
            "id": f"s{i}",
            "prompt": "Summarise in one sentence: Bees dance to show where flowers are. "
            "The angle of the dance gives the direction and its length the distance.",
            "response": response,
        }
        for i, response in enumerate(
            ["Bees dance to show the direction and distance of flowers.", "Cats sleep."]
        )
    ]
    data = write_rows(tmp_path / "summaries.jsonl", rows)
    summary, results = run_judged(
        client, "pointwise", data, "judge-vertex-summaries", template="summarization_quality"
    )
    assert summary.status == "finished" and summary.rows_scored == 2
    assert all(r.score is not None for r in results.values())
    assert results["s0"].score > results["s1"].score  # type: ignore[operator]


def test_a_dataset_no_row_of_which_has_a_needed_column_creates_no_job(
    client: Any, redis_server: RedisServer, tmp_path: Path
) -> None:
    rows = [{"id": str(i), "prompt": "q", "answer_1": "a", "answer_2": "b"} for i in range(3)]
    data = write_rows(tmp_path / "d.jsonl", rows)
    jobs_before = redis_server.client().zcard("evalq:jobs")
    with pytest.raises(DatasetError) as caught:
        client.submit("pairwise", data, judge_model="judge-missing-column")
    assert "'response_a'" in str(caught.value)
    assert "columns present: answer_1, answer_2, id, prompt" in str(caught.value)
    assert redis_server.client().zcard("evalq:jobs") == jobs_before
