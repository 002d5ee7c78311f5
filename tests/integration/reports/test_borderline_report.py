"""An adaptive job's HTML report, end to end: real Redis, a real worker, the noisy simulated
judge, `evalq report`. Easy items read as sure, every undecided or borderline verdict is in the
list at the top and leads to its own row, and the title's count is the results'."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalq.client.output.html.borderline import state_of
from tests.conftest import FakeGemini, RedisServer, worker_env
from tests.support.cli import run_evalq
from tests.support.noisy_rows import noisy_pointwise_rows
from tests.support.report_pages import borderline_list_links, report_card_anchors

pytestmark = pytest.mark.integration


def test_an_adaptive_jobs_report_lists_its_split_verdicts_linked_to_their_rows(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    data = noisy_pointwise_rows(tmp_path, easy=3, split=4, tag="border-report")
    options = {"template": "question_answering_quality", "samples": "auto"}
    job = client.submit("pointwise", data, judge_model="judge-border-report", options=options)
    summary = client.wait(job.job_id, timeout_s=180)
    assert summary.status == "finished"
    states = {r.id: [state_of(rep) for rep in r.repeats] for r in client.results(job.job_id)}
    env = worker_env(redis_server.url, fake.url)
    done = run_evalq(env, "report", job.job_id, "--html", "report.html", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    page = (tmp_path / "report.html").read_text(encoding="utf-8")

    for i in range(3):
        assert states[f"easy{i}"] == ["sure"]
        card = page.split(f'data-row="easy{i}"', 1)[1].split('<div class="card', 1)[0]
        assert "3 of 3 samples say 4" in card and 'class="undecided"' not in card
    undecided = sum(s.count("undecided") for s in states.values())
    borderline = sum(s.count("borderline") for s in states.values())
    assert undecided + borderline > 0  # the split items' seeds leave some verdict unsure
    assert f"undecided, {borderline} borderline (certainty under 0.95)" in page
    assert f"{undecided} verdict{'s' if undecided != 1 else ''} undecided" in page
    links = borderline_list_links(page)
    unsure = [row for row, s in states.items() if "undecided" in s or "borderline" in s]
    assert sorted(row for _, row in links) == sorted(unsure)
    cards = report_card_anchors(page)
    for anchor, row in links:
        assert cards[row] == anchor
    for row in unsure:
        card = page.split(f'data-row="{row}"', 1)[1].split('<div class="card', 1)[0]
        assert 'class="undecided"' in card or 'class="borderline"' in card
