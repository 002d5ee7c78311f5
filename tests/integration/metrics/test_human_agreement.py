"""Jobs with human labels end to end (real Redis, real workers, the fake Gemini server with
scripted replies): the summary's agreement equals what this test computes from the job's own
results and the labels, bad labels are counted and named, and the rows are scored all the
same; `status`, `--json` and the Prometheus endpoint show it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scipy import stats as scipy_stats

from evalq.core.human.pairwise_accuracy import pairwise_accuracy
from tests.conftest import FakeGemini, RedisServer, worker_env
from tests.support.cli import evalq_stdout, scrape_metrics
from tests.support.datasets import png, write_rows
from tests.support.grounding import (
    CLOSING,
    COLDS_CURED,
    CONTEXT,
    QUERY,
    RED_APPLES,
    YELLOW_BANANAS,
    labels,
)
from tests.support.rating_replies import rating

pytestmark = pytest.mark.integration

RATINGS = [1, 2, 3, 4, 5, 2, 3, 4, 5, 1]
LABELS = [1, 3, 3, 5, 4, 2, 2, 4, 5, 2]


def test_a_pointwise_job_reports_its_agreement_with_the_raters(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    fake.script([{"match": f"Hr-{i} ", "reply": rating(r)} for i, r in enumerate(RATINGS)])
    rows: list[dict[str, Any]] = [
        {"id": f"r{i}", "prompt": f"topic {i // 2}", "response": f"Hr-{i} text.", "rater": h}
        for i, h in enumerate(LABELS)
    ]
    rows += [
        {"id": "bad1", "prompt": "t", "response": "Hr-1 text again.", "rater": "maybe"},
        {"id": "bad2", "prompt": "t", "response": "Hr-2 text again.", "rater": 9},
        {"id": "bad3", "prompt": "t", "response": "Hr-3 text again."},
    ]
    data = write_rows(tmp_path / "d.jsonl", rows)
    env = worker_env(redis_server.url, fake.url)
    out = evalq_stdout(
        env,
        "run",
        "pointwise",
        str(data),
        "--template",
        "fluency",
        "--human",
        "rater",
        "--judge-model",
        "judge-human-pointwise",
        "--wait",
        "--json",
    )
    summary = json.loads(out)
    assert summary["rows_scored"] == len(rows)  # bad labels cost no row its score
    results = {r.id: r for r in client.results(summary["job_id"])}
    labelled = [results[f"r{i}"] for i in range(len(LABELS))]
    judge = [r.details["mean_rating"] for r in labelled]
    assert judge == RATINGS
    level = summary["human_agreement"]["levels"][0]
    assert (level["level"], level["source"]) == ("row", "column rater")
    overall = level["overall"]
    assert overall["spearman"]["value"] == pytest.approx(scipy_stats.spearmanr(judge, LABELS)[0])
    assert overall["kendall"]["value"] == pytest.approx(scipy_stats.kendalltau(judge, LABELS)[0])
    assert overall["spearman"]["n"] == len(LABELS)
    groups = [r.prompt or r.extra["prompt"] for r in labelled]
    expected = pairwise_accuracy([float(j) for j in judge], [float(h) for h in LABELS], groups)
    assert overall["pairwise_accuracy"]["value"] == pytest.approx(expected.value)
    assert overall["pairwise_accuracy"]["n"] == 5  # five prompts of two rows
    exact = sum(j == h for j, h in zip(judge, LABELS, strict=True)) / len(LABELS)
    assert overall["accuracy"]["value"] == pytest.approx(exact)
    assert level["left_out_by_reason"] == {"not_a_number": 1, "out_of_range": 1, "missing": 1}
    assert "row bad1: human 'maybe' is not a number or yes/no" in level["left_out_examples"]

    status = evalq_stdout(env, "status", summary["job_id"])
    assert "human agreement (row, column rater)" in status
    assert f"{len(LABELS)} labels, 3 left out" in status

    metrics = scrape_metrics(env)
    key = f'job_id="{summary["job_id"]}",level="row",metric="pointwise"'
    assert f'evalq_job_human_agreement_n{{{key},statistic="spearman"}} 10.0' in metrics
    spearman = overall["spearman"]["value"]
    line = f'evalq_job_human_agreement{{{key},statistic="spearman"}} '
    assert float(metrics.split(line)[1].split()[0]) == pytest.approx(spearman)


def test_a_gecko_job_compares_the_validator_with_the_raters_answers(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    image = png(tmp_path / "a.png", "green")
    fake.script([{"match": "Hq-y", "reply": "yes"}, {"match": "Hq-n", "reply": "no"}])
    questions = [
        {"question": "Hq-y one?", "answer": "yes", "tag": "color", "human": "yes"},
        {"question": "Hq-n two?", "answer": "yes", "tag": "color", "human": "yes"},
        {"question": "Hq-n three?", "answer": "no", "human": "no"},
        {"question": "Hq-y four?", "answer": "yes", "human": "perhaps"},
        {"question": "Hq-y five?", "answer": "yes"},
    ]
    rows = [
        {"id": f"g{i}", "prompt": "p", "image": str(image), "questions": questions}
        for i in range(2)
    ]
    job = client.submit(
        "gecko-image", write_rows(tmp_path / "g.jsonl", rows), judge_model="judge-human-gecko"
    ).job_id
    summary = client.wait(job, timeout_s=60)
    assert summary.rows_scored == 2
    results = client.results(job)
    compared = [(q.answer, q.human) for r in results for q in r.questions if q.human]
    assert len(compared) == 6
    found = summary.human_agreement
    assert found is not None
    level = found.levels[0]
    assert level.level == "question"
    assert level.overall.accuracy is not None
    assert level.overall.accuracy.value == pytest.approx(
        sum(a == h for a, h in compared) / len(compared)
    )
    assert level.overall.accuracy.value == pytest.approx(4 / 6)  # "two" is answered no
    assert level.left_out_by_reason == {"unknown_label": 2, "missing": 2}
    assert "row g0 questions[3]: human 'perhaps' is not yes or no" in level.left_out_examples


def test_a_groundedness_job_compares_sentence_labels_on_evalqs_split(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    fake.script(
        [
            {"match": "HgA", "reply": labels(RED_APPLES, COLDS_CURED)},
            {"match": "HgB", "reply": labels(RED_APPLES, YELLOW_BANANAS, CLOSING)},
            {"match": "HgC", "reply": labels(RED_APPLES)},
        ]
    )
    rows = [
        {
            "id": "a",
            "query": f"HgA {QUERY}",
            "context": CONTEXT,
            "response": "Apples are red. Apples cure colds.",
            "human_labels": ["supported", "supported"],
        },
        {
            "id": "b",
            "query": f"HgB {QUERY}",
            "context": CONTEXT,
            "response": "Apples are red. Bananas are yellow. I hope this helps!",
            "human_labels": [
                {"sentence": "Bananas are yellow.", "label": "supported"},
                {"sentence": "I hope this helps!", "label": "unsupported"},
                {"sentence": "Cherries are ripe.", "label": "supported"},
            ],
        },
        {
            "id": "c",
            "query": f"HgC {QUERY}",
            "context": CONTEXT,
            "response": "Apples are red.",
            "human_labels": json.dumps(["supported", "no_rad"]),
        },
    ]
    job = client.submit(
        "groundedness", write_rows(tmp_path / "s.jsonl", rows), judge_model="judge-human-ground"
    ).job_id
    summary = client.wait(job, timeout_s=60)
    assert summary.rows_scored == 3
    results = {r.id: r for r in client.results(job)}

    def counted(row_id: str) -> dict[str, str]:
        judge = next(iter(results[row_id].details["judges"].values()))
        return {s["sentence"]: s["label"] for s in judge["response_sentences"]}

    a, b = counted("a"), counted("b")
    compared = [
        (a["Apples are red."], "supported"),
        (a["Apples cure colds."], "supported"),
        (b["Bananas are yellow."], "supported"),
        (b["I hope this helps!"], "unsupported"),
    ]
    found = summary.human_agreement
    assert found is not None
    level = found.levels[0]
    assert (level.level, level.labels_used) == ("sentence", 4)
    assert level.overall.accuracy is not None
    assert level.overall.accuracy.value == pytest.approx(
        sum(j == h for j, h in compared) / len(compared)
    )
    assert level.left_out_by_reason == {"not_in_split": 3}
    assert any("row c: human_labels has 2 labels" in m for m in level.left_out_examples)
