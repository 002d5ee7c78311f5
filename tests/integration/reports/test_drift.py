"""`evalq drift` end to end on real workers and the fake server's judges: the same rows judged
by the simulated judge and by one that drifts on purpose (fake-drift-Npct: N% of items'
verdicts changed, chosen by the item's hash), so the truth is known. One set of jobs for the
module: a judge that changes a tenth of the ratings is drift beyond noise (its flip share's
interval holding 10%), the same judge twice is within noise, a ranking whose top two swap
shows the swap, and the HTML page sets the changed rows' verdicts side by side."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evalq.fake_gemini.drift import FAVOURED
from tests.conftest import FakeGemini, RedisServer, WorkerPool, worker_env
from tests.support.cli import LONG_TIMEOUT_S, evalq_ok, one_line_refusal, run_evalq
from tests.support.datasets import write_rows

pytestmark = pytest.mark.integration

JUDGE = "drift-test-judge"  # a model of this module's own: no other test's cached replies
DRIFTING = "drift-test-drift-10pct"
FAVOURING = "drift-test-drift-0pct"  # changes nothing but the favoured responses' comparisons
ROWS = 120
RETEST = 60
WORDS = ("moon", "sun", "pull", "sea", "tide", "spring", "neap", "coast", "rise", "fall")


def rated_rows(n: int) -> list[dict[str, str]]:
    """Answers that use more or fewer of the question's words: ratings spread over the scale."""
    rows = []
    for i in range(n):
        used = " ".join(WORDS[(i + j) % len(WORDS)] for j in range(1 + i % 7))
        rows.append(
            {
                "id": f"r{i}",
                "prompt": "Why do the moon and sun make the sea rise and fall in spring tides?",
                "context": "The moon's pull on the sea raises tides; with the sun, spring tides.",
                "response": f"Answer {i}: {used}.",
                "part": "first" if i < n // 2 else "second",
                "people": str(min(5, 2 + i % 7 // 2)),  # a rater's 1-5, closer to fuller answers
            }
        )
    return rows


def ranked_rows(n: int) -> list[dict[str, str]]:
    """Three answers per question: a full one, a fair one the drifting judge favours, a poor one."""
    return [
        {
            "id": f"q{i}",
            "prompt": "Why do the moon and sun make the sea rise and fall in spring tides?",
            "context": "The moon's pull on the sea raises tides; with the sun, spring tides.",
            "full": f"The moon and sun pull the sea, so it rises and falls in spring tides {i}.",
            "fair": f"The moon pulls the sea {i}. {FAVOURED}",
            "poor": f"Cats {i}.",
        }
        for i in range(n)
    ]


@dataclass(frozen=True)
class Jobs:
    env: Mapping[str, str]
    folder: Path
    old: str
    new: str
    same: str
    rank_old: str
    rank_new: str
    drifted: dict[str, Any]  # `drift OLD NEW --retest N --json`
    retest: str  # the retest job it made


def _job_of(env: Mapping[str, str], *args: str) -> str:
    done = evalq_ok(env, *args, "--wait", "--json", timeout_s=LONG_TIMEOUT_S)
    return str(json.loads(done.stdout)["job_id"])


@pytest.fixture(scope="module")
def jobs(
    redis_server: RedisServer,
    fake_gemini: FakeGemini,
    workers: WorkerPool,
    tmp_path_factory: pytest.TempPathFactory,
) -> Jobs:
    folder = tmp_path_factory.mktemp("drift")
    env = worker_env(redis_server.url, fake_gemini.url, COLUMNS="200")
    data = write_rows(folder / "answers.jsonl", rated_rows(ROWS))
    common = ("run", "pointwise", str(data), "--template", "question_answering_quality")
    old = _job_of(env, *common, "--judge-model", JUDGE)
    new = _job_of(env, *common, "--judge-model", DRIFTING)
    same = _job_of(env, *common, "--judge-model", JUDGE, "--no-cache")
    ranked = write_rows(folder / "ranked.jsonl", ranked_rows(6))
    rank = ("rank", str(ranked), "--candidates", "full,fair,poor")
    rank_old = _job_of(env, *rank, "--judge-model", JUDGE)
    rank_new = _job_of(env, *rank, "--judge-model", FAVOURING)
    done = evalq_ok(
        env, "drift", old, new, "--retest", str(RETEST), "--json", timeout_s=LONG_TIMEOUT_S
    )
    found = re.search(r"retest: job ([0-9a-f]{12})", done.stderr)
    assert found, done.stderr
    return Jobs(env, folder, old, new, same, rank_old, rank_new, json.loads(done.stdout), found[1])


def test_a_judge_that_changes_a_tenth_of_ratings_is_drift_beyond_noise(jobs: Jobs) -> None:
    report = jobs.drifted
    units = report["units"]
    assert units["units"] == ROWS
    low, high = units["ci95"]
    assert low <= 0.10 <= high  # the truth: a tenth of the items' verdicts changed
    assert low > 0.0
    # Each change moves a rating by one point, up (or down from 5).
    assert all(abs(int(c["before"]) - int(c["after"])) == 1 for c in units["changes"])
    assert units["kappa"]["method"] == "cohen kappa (quadratic weights)"
    noise = report["noise"]
    assert (noise["source"], noise["job_id"], noise["units"]) == ("retest", jobs.retest, RETEST)
    assert noise["share"] == 0.0  # the simulated judge answers the same rows alike
    assert report["verdict"]["drift"] is True
    assert report["verdict"]["line"].startswith("drift beyond noise: ")
    assert report["changed_rows"] and all(r["changed"] == 1 for r in report["changed_rows"])
    # The retest is the old judge on RETEST of its rows again, recorded as a regrade of it.
    retest = json.loads(evalq_ok(jobs.env, "status", jobs.retest, "--json").stdout)
    assert retest["judge_model"] == JUDGE and retest["rows_total"] == RETEST


def test_the_same_judge_twice_is_within_its_own_noise(jobs: Jobs) -> None:
    done = evalq_ok(jobs.env, "drift", jobs.old, jobs.same, "--retest-job", jobs.retest)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("SIMULATED JUDGE")
    assert lines[2].startswith(f"within the judge's own noise: 0 of {ROWS} verdicts changed")
    assert f"verdicts changed: 0 of {ROWS} units" in done.stdout
    # Without a retest or repeats, the report says the noise is unknown and how to measure it.
    bare = evalq_ok(jobs.env, "drift", jobs.old, jobs.new).stdout
    assert "noise floor unknown: " in bare and "--retest N" in bare


def test_a_ranking_whose_top_two_swap_shows_the_swap(jobs: Jobs) -> None:
    report = json.loads(evalq_ok(jobs.env, "drift", jobs.rank_old, jobs.rank_new, "--json").stdout)
    ranking = report["ranking"]
    assert ranking["old_order"] == ["full", "fair", "poor"]
    assert ranking["new_order"] == ["fair", "full", "poor"]
    assert ranking["swaps"] == [{"ahead_before": "full", "ahead_after": "fair"}]
    assert ranking["tau"] == pytest.approx(1 / 3)  # one of three pairs the other way round
    text = evalq_ok(jobs.env, "drift", jobs.rank_old, jobs.rank_new).stdout
    assert "full > fair > poor -> fair > full > poor" in text
    assert "swapped: full was ahead of fair, now behind" in text


def test_the_html_page_sets_changed_rows_side_by_side(jobs: Jobs) -> None:
    page = jobs.folder / "drift.html"
    evalq_ok(
        jobs.env, "drift", jobs.old, jobs.new, "--retest-job", jobs.retest, "--html", str(page)
    )
    html = page.read_text(encoding="utf-8")
    assert "drift beyond noise" in html
    cards = html.split('class="card changed-row"')[1:]
    assert len(cards) == 10  # --top's default
    first = cards[0]
    assert 'class="side old"' in first and 'class="side new"' in first
    old_side, new_side = first.split('class="side new"')
    assert "[simulated judge]" in old_side and "[simulated drift]" not in old_side
    assert "[simulated drift] This judge drifts on purpose" in new_side


def test_jobs_on_other_inputs_are_refused_in_one_line(jobs: Jobs) -> None:
    rows = rated_rows(3)
    rows[1]["response"] = "Another answer."
    other = write_rows(jobs.folder / "other.jsonl", rows)
    job = _job_of(
        jobs.env,
        "run",
        "pointwise",
        str(other),
        "--template",
        "question_answering_quality",
        "--judge-model",
        JUDGE,
    )
    line = one_line_refusal(run_evalq(jobs.env, "drift", jobs.old, job))
    assert "row 'r1' (line 2) has another data.response" in line
    assert "use evalq compare" in line
    line = one_line_refusal(run_evalq(jobs.env, "drift", jobs.old, jobs.rank_old))
    assert "is a pointwise job and" in line


def test_the_judge_closer_to_the_peoples_labels_is_named(jobs: Jobs) -> None:
    report = json.loads(
        evalq_ok(jobs.env, "drift", jobs.old, jobs.new, "--human", "people", "--json").stdout
    )
    human = report["human"]
    (level,) = human["levels"]
    assert level["level"] == "row" and level["labels"] == ROWS
    better = "new" if level["new"] > level["old"] else "old"
    assert human["line"].startswith(f"the {better} judge agrees better with the people: row ")
    assert f"{level['new']:.3f} (new) vs {level['old']:.3f} (old)" in human["line"]
