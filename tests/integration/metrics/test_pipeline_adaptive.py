"""`--samples auto` end to end: real Redis, a real worker, the noisy simulated judge over HTTP.
Easy items stop early, split ones are asked further, an undecided verdict is never a sure
score, every sample is one judge call counted once, and a spend cap holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from devtools.local import wait_for
from evalq.core.models import RowResult
from evalq.core.pricing import usd
from evalq.examples.video import GECKO_VIDEO_EXAMPLES, clip_bytes
from tests.conftest import FakeGemini
from tests.support.datasets import png, write_rows, yes_no
from tests.support.noisy_rows import noisy_pairwise_rows, noisy_pointwise_rows, split_seeds
from tests.support.stores import store_of

pytestmark = pytest.mark.integration
QA = {"template": "question_answering_quality"}


def _auto_job(
    client: Any, metric: str, data: Path, judge: str, **options: Any
) -> tuple[Any, dict[str, RowResult]]:
    job = client.submit(metric, data, judge_model=judge, options=options).job_id
    summary = client.wait(job, timeout_s=180)
    assert summary.status == "finished"
    return summary, {r.id: r for r in client.results(job)}


def _samples(rows: dict[str, RowResult]) -> int:
    return sum(len(r.samples) for row in rows.values() for r in row.repeats)


def test_pointwise_auto_stops_easy_items_early_and_keeps_split_ones_undecided(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    data = noisy_pointwise_rows(tmp_path, easy=6, split=4)
    summary, rows = _auto_job(client, "pointwise", data, "judge-adaptive-pw", **QA, samples="auto")
    for i in range(6):
        (easy,) = rows[f"easy{i}"].repeats
        assert [s.answer for s in easy.samples] == ["4", "4", "4"]
        assert (easy.verdict, easy.decided) == ("4", True)
        assert rows[f"easy{i}"].details["mean_rating"] == 4.0
    for i in range(4):
        row = rows[f"split{i}"]
        (split,) = row.repeats
        assert len(split.samples) > 3  # its first three disagree: asked further
        if not split.decided:
            assert split.verdict is None
            assert 4.0 < row.details["mean_rating"] < 5.0  # a split vote, not a sure 4 or 5
    # Every sample is one judge call, counted once.
    assert fake.stats()["requests"] == summary.judge_calls == _samples(rows)
    assert summary.simulated


def test_pairwise_and_rank_auto_ask_both_orders_until_settled(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    data = noisy_pairwise_rows(tmp_path, easy=4, split=3)
    summary, rows = _auto_job(client, "pairwise", data, "judge-adaptive-pair", samples="auto")
    for i in range(4):
        (easy,) = rows[f"easy{i}"].repeats
        assert [(s.answer, s.order) for s in easy.samples] == [("A", "AB"), ("A", "BA")] * 2
        assert rows[f"easy{i}"].details["winner"] == "A"
    for i in range(3):
        (split,) = rows[f"split{i}"].repeats
        if not split.decided:
            assert split.verdict is None and rows[f"split{i}"].score not in (0.0, 1.0)
    assert summary.judge_calls == _samples(rows)
    ranked = write_rows(
        tmp_path / "rank.jsonl",
        [
            {
                "id": "r",
                "prompt": "Q?",
                "low": "Weak. [judge-odds win=0 seed=1]",
                "high": "Strong.",
            },
        ],
    )
    _, by_id = _auto_job(
        client, "rank", ranked, "judge-adaptive-rank", candidates=["low", "high"], samples="auto"
    )
    (pair,) = by_id["r"].repeats
    assert (pair.unit, pair.verdict, len(pair.samples)) == ("low vs high", "B", 4)


def test_the_dry_run_gives_a_range_and_a_cap_holds_with_adaptive_repeats(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    data = noisy_pointwise_rows(tmp_path, easy=8, split=4, tag=" (capped)")
    options = {**QA, "samples": "auto"}
    judge = "gemini-2.5-flash"
    plan = client.plan("pointwise", data, judge_model=judge, options=options)
    # Three agreeing samples are the fewest that settle a rating of at most 8: the bottom.
    assert plan.calls_min == 12 * 3 and plan.calls_total == 12 * 8
    assert plan.cost_usd_min is not None and plan.cost_usd is not None
    assert plan.cost_usd_min < plan.cost_usd
    cap = plan.cost_usd_min / 3  # not even every item's minimum: the job must pause
    job = client.submit(
        "pointwise", data, judge_model=judge, options=options, max_cost_usd=cap
    ).job_id
    summary = client.wait(job, timeout_s=180)
    made = fake.stats()["requests"]
    print(f"\ncapped: {summary.status}, {made} requests, spent {summary.spent_usd}, cap {cap}")
    assert summary.status == "paused"
    # The calls in flight at the pause land and their units record them (the cache holds their
    # replies) before the resume, which would otherwise send those units again beside them.
    wait_for(
        lambda: fake.stats()["in_flight"] == 0 and store_of(client).reserved(job) == 0,
        60,
        "the calls in flight to be counted",
    )
    summary = client.summary(job)
    per_call = max(u["cost_usd"] / u["calls"] for u in summary.usage)
    assert summary.spent_usd <= cap + per_call  # each sample reserved its cost before its call
    client.resume(job, max_cost_usd=1.0)
    summary = client.wait(job, timeout_s=180)
    assert summary.status == "finished"
    rows = {r.id: r for r in client.results(job)}
    # Every request made is counted as spent, and the verdicts hold every sample once. (The
    # samples a unit answered before the pause come from the call cache when it runs again; a
    # unit task still queued at the resume may run beside the one the resume sends, and then
    # pays again for what neither had written yet: counted, never hidden.)
    requests = fake.stats()["requests"]
    print(f"after resume: {requests} requests, {_samples(rows)} samples")
    assert requests == summary.judge_calls >= _samples(rows) >= made
    assert usd(int(summary.spent_usd * 1e9)) <= plan.cost_usd + 1e-9


def test_gecko_auto_asks_a_split_question_further_and_scores_its_share(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    (seed,) = split_seeds(1, {"yes": 0.5, "no": 0.5}, "question")
    image = png(tmp_path / "a.png")
    questions = [
        yes_no("Gk-auto: is it red? [judge-odds yes=1 seed=1]"),
        yes_no(f"Gk-auto: is it round? [judge-odds yes=0.5 no=0.5 seed={seed}]"),
    ]
    data = write_rows(
        tmp_path / "g.jsonl",
        [{"id": "r", "prompt": "p", "image": str(image), "questions": questions}],
    )
    summary, rows = _auto_job(client, "gecko-image", data, "judge-adaptive-gecko", samples="auto")
    sure, split = rows["r"].repeats
    assert ([s.answer for s in sure.samples], sure.decided) == (["yes"] * 3, True)
    assert len(split.samples) > 3
    share = sum(s.answer == "yes" for s in split.samples) / len(split.samples)
    assert rows["r"].score == pytest.approx((1 + share) / 2)
    assert fake.stats()["requests"] == summary.judge_calls == _samples(rows)


def test_gecko_video_auto_asks_a_split_choice_further_and_keeps_a_sure_one_short(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    (seed,) = split_seeds(1, {"a": 0.5, "b": 0.5}, "video_question")
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(clip_bytes(GECKO_VIDEO_EXAMPLES[0]))
    choices = ["a) it stays still", "b) it moves right", "c) it moves left", "d) it grows"]
    questions = [
        {"question": "Gv-auto: does it move? [judge-odds a=1 seed=1]", "answer": "a"},
        {"question": f"Gv-auto: which way? [judge-odds a=0.5 b=0.5 seed={seed}]", "answer": "a"},
    ]
    data = write_rows(
        tmp_path / "v.jsonl",
        [
            {
                "id": "v",
                "prompt": "a ball",
                "video": str(clip),
                "questions": [{**q, "choices": choices, "tag": "action"} for q in questions],
            }
        ],
    )
    summary, rows = _auto_job(client, "gecko-video", data, "judge-adaptive-video", samples="auto")
    # The choices are shown in the row's own shuffled order: the judge's letter is mapped back
    # to the dataset's, so the sure question's one answer need not be "a".
    sure, split = rows["v"].repeats
    assert len(sure.samples) == 3 and len({s.answer for s in sure.samples}) == 1
    assert sure.decided and sure.verdict == sure.samples[0].answer
    assert len(split.samples) > 3 and len({s.answer for s in split.samples}) == 2
    shares = [sum(s.answer == "a" for s in r.samples) / len(r.samples) for r in (sure, split)]
    assert rows["v"].score == pytest.approx(sum(shares) / 2)
    assert fake.stats()["requests"] == summary.judge_calls == _samples(rows)
