"""Groundedness jobs end to end: real Redis, real worker processes, the fake server over HTTP.

Scripted judge replies pin down the scoring rules; the simulated judge drives candidate
generation with two judges; an isolated stack watched with Redis MONITOR shows that a long
context is stored once and never travels in a task message.
"""

from __future__ import annotations

import base64
import codecs
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from devtools.local import wait_for
from evalq.core.errors import DatasetError
from evalq.examples.grounding import ETHANOL_CONTEXT, ETHANOL_QUERY, write_groundedness_example
from tests.conftest import FakeGemini, RedisServer, WorkerPool, worker_env
from tests.support.cli import waited_summary
from tests.support.datasets import write_rows
from tests.support.grounding import (
    CLOSING,
    COLDS_CURED,
    CONTEXT,
    INELIGIBLE_BECAUSE,
    QUERY,
    RED_APPLES,
    YELLOW_BANANAS,
    labels,
)
from tests.support.stack import stack

pytestmark = pytest.mark.integration


GROUNDED_RESPONSE = "Apples are red. Bananas are yellow. I hope this helps!"
SUPPORTED_WITH_CLOSING = labels(RED_APPLES, YELLOW_BANANAS, CLOSING)


def judges_of(row: Any) -> dict[str, dict[str, Any]]:
    return dict(row.details["judges"])


def test_scripted_labels_decide_the_score(client: Any, fake: FakeGemini, tmp_path: Path) -> None:
    seed_form = (
        "Here are my labels:\n```json\n"
        + json.dumps(
            [
                {
                    "sentence": "Apples are red.",
                    "label": "supported",
                    "rationale": "r",
                    "excerpt": "Apples are red fruits.",
                },
                {"sentence": "Thanks!", "label": "no_rad", "rationale": "r", "excerpt": None},
            ]
        )
        + "\n```"
    )
    fake.script(
        [
            {"match": "GsFull", "reply": SUPPORTED_WITH_CLOSING},
            {"match": "GsUnsupported", "reply": labels(RED_APPLES, COLDS_CURED)},
            {
                "match": "GsContradictory",
                "reply": labels(
                    ("Bananas are blue.", "contradictory", "Bananas are yellow fruits."),
                    ("Goodbye.", "no_rad", None),
                ),
            },
            {
                "match": "GsInvented",
                "reply": labels(
                    RED_APPLES,
                    ("Pears are sweet.", "supported", "Pears are the sweetest fruit of all."),
                ),
            },
            {"match": "GsIneligible", "reply": labels(RED_APPLES, eligible=False)},
            {"match": "GsSeedForm", "reply": seed_form},
            {"match": "GsUnreadable", "reply": "I think the response is quite well grounded."},
        ]
    )
    # The rule's tag goes in the query: every sentence of the response needs a label.
    responses = {
        "Full": GROUNDED_RESPONSE,
        "Unsupported": "Apples are red. Apples cure colds.",
        "Contradictory": "Bananas are blue. Goodbye.",
        "Invented": "Apples are red. Pears are sweet.",
        "Ineligible": "Apples are red.",
        "SeedForm": "Apples are red. Thanks!",
        "Unreadable": "Apples are red.",
    }
    rows = [
        {"id": n.lower(), "query": f"{QUERY} (Gs{n})", "context": CONTEXT, "response": response}
        for n, response in responses.items()
    ]
    data = write_rows(tmp_path / "d.jsonl", rows)
    job = client.submit("groundedness", data, judge_model="gs-scripted-judge").job_id
    summary = client.wait(job, timeout_s=60)
    results = {r.id: r for r in client.results(job)}
    scores = {k: (r.status, r.score) for k, r in results.items()}
    assert scores == {
        "full": ("scored", 1.0),  # the no_rad closing costs nothing
        "unsupported": ("scored", 0.0),
        "contradictory": ("scored", 0.0),
        "invented": ("scored", 0.0),
        "ineligible": ("scored", 0.0),
        "seedform": ("scored", 1.0),
        "unreadable": ("failed", None),  # unscored, not 0
    }
    full = judges_of(results["full"])["gs-scripted-judge"]
    assert full["supported_fraction"] == 1.0
    assert full["counts"] == {"supported": 2, "unsupported": 0, "contradictory": 0, "no_rad": 1}
    invented = judges_of(results["invented"])["gs-scripted-judge"]
    assert [s["label"] for s in invented["sentences"]] == ["supported", "unsupported"]
    assert [s["judge_label"] for s in invented["sentences"]] == ["supported", "supported"]
    assert invented["sentences"][1]["excerpt_check"] == "not_found"
    assert "not in the context" in invented["sentences"][1]["note"]
    ineligible = judges_of(results["ineligible"])["gs-scripted-judge"]
    assert ineligible["why"] == f"ineligible: {INELIGIBLE_BECAUSE}"
    assert judges_of(results["seedform"])["gs-scripted-judge"]["eligible"] is None
    unreadable = results["unreadable"]
    assert (unreadable.reason, unreadable.status) == ("parse_error", "failed")
    assert judges_of(unreadable)["gs-scripted-judge"]["status"] == "unscored"
    assert summary.unscored_by_reason == {"parse_error": 1}
    assert (summary.rows_scored, summary.rows_failed) == (6, 1)
    assert summary.mean_score == pytest.approx(2 / 6)  # the unreadable row is not a 0
    assert summary.candidate_calls == 0
    assert summary.metric_summary["excerpts_rejected"] == 1
    assert summary.metric_summary["responses"] == {"given": 7, "generated": 0}
    assert "agreement" not in summary.metric_summary  # one judge


def test_one_unreadable_judge_leaves_the_other_scoring(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    fake.script(
        [
            {"match": "GsPartial", "reply": "no idea", "times": 1},
            {"match": "GsPartial", "reply": SUPPORTED_WITH_CLOSING},
        ]
    )
    data = write_rows(
        tmp_path / "d.jsonl",
        [
            {
                "id": "p",
                "query": f"{QUERY} (GsPartial)",
                "context": CONTEXT,
                "response": GROUNDED_RESPONSE,
            }
        ],
    )
    judges = ["gs-partial-a", "gs-partial-b"]
    job = client.submit("groundedness", data, judge_models=judges).job_id
    summary = client.wait(job, timeout_s=60)
    (row,) = client.results(job)
    assert (row.status, row.score) == ("partial", 1.0)
    per_judge = judges_of(row)
    assert sorted(j["status"] for j in per_judge.values()) == ["ok", "unscored"]
    assert {j["reason"] for j in per_judge.values()} == {None, "parse_error"}
    assert summary.unscored_by_reason == {"parse_error": 1}
    assert summary.metric_summary["agreement"]["rows_compared"] == 0


def test_a_sentence_the_judge_skips_is_asked_again_and_never_grounded(
    client: Any, fake: FakeGemini, tmp_path: Path
) -> None:
    """Through the whole stack: a judge that labels "Apples are red." and skips "Bananas cure
    cancer." is asked again for the sentence it skipped, and the row is never grounded."""
    only_apples = labels(RED_APPLES)
    fake.script(
        [
            {
                "match": r"GsSkipOnce.*<untrusted-[0-9a-f]{16} kind=unlabelled_sentences>\nBananas cure cancer\.",
                "reply": labels(("Bananas cure cancer.", "unsupported", None)),
            },
            {"match": "GsSkipOnce", "reply": only_apples},
            {"match": "GsSkipTwice", "reply": only_apples},  # the re-ask too
        ]
    )
    response = "Apples are red. Bananas cure cancer."
    rows = [
        {"id": tag, "query": f"{QUERY} ({tag})", "context": CONTEXT, "response": response}
        for tag in ("GsSkipTwice", "GsSkipOnce")
    ]
    job = client.submit(
        "groundedness", write_rows(tmp_path / "d.jsonl", rows), judge_model="gs-skip-judge"
    ).job_id
    summary = client.wait(job, timeout_s=60)
    results = {r.id: r for r in client.results(job)}

    twice = results["GsSkipTwice"]
    assert (twice.status, twice.score, twice.reason) == ("failed", None, "incomplete_labels")
    judged = judges_of(twice)["gs-skip-judge"]
    assert (judged["status"], judged["grounded"], judged["missing"]) == ("unscored", None, [1])
    assert judged["asked_again"] == [1]
    assert [s["status"] for s in judged["response_sentences"]] == ["labelled", "missing"]
    assert "Bananas cure cancer." in judged["detail"]

    once = results["GsSkipOnce"]
    assert (once.status, once.score) == ("scored", 0.0)
    judged = judges_of(once)["gs-skip-judge"]
    assert [(s["label"], s["status"]) for s in judged["response_sentences"]] == [
        ("supported", "labelled"),
        ("unsupported", "labelled_when_asked_again"),
    ]

    assert summary.unscored_by_reason == {"incomplete_labels": 1}
    assert (summary.rows_scored, summary.rows_failed) == (1, 1)
    assert summary.mean_score == 0.0  # the skipped row is neither a 1 nor a 0
    assert summary.metric_summary["labels_asked_again"] == 2
    assert summary.judge_calls == 4  # one re-ask per row, no more
    assert fake.stats()["script_rules_fired"] == {"0": 1, "1": 1, "2": 2}


def test_generation_then_two_judges(
    client: Any,
    fake: FakeGemini,
    redis_server: RedisServer,
    workers: WorkerPool,
    tmp_path: Path,
) -> None:
    dataset = write_groundedness_example(tmp_path / "example")
    judges = ["gx-gen-judge-a", "gx-gen-judge-b"]
    submitted = client.submit(
        "groundedness",
        dataset,
        judge_models=judges,
        options={"candidate_model": "gx-gen-candidate"},
    )
    summary = client.wait(submitted.job_id, timeout_s=120)
    rows = {r.id: r for r in client.results(submitted.job_id)}
    assert summary.status == "finished"
    assert summary.simulated
    generated = [r for r in rows.values() if r.details["response_source"] == "candidate"]
    assert len(generated) == 4
    for row in generated:
        assert row.details["candidate_model"] == "gx-gen-candidate"
        assert row.details["response"].startswith("[simulated judge]")
        assert row.score == 1.0, (row.id, row.details)  # an extractive answer is grounded
    assert rows["retail-grounded"].score == 1.0
    assert rows["ethanol-unsupported"].score == 0.0
    assert rows["ethanol-contradictory"].score == 0.0
    for row in rows.values():
        assert set(judges_of(row)) == set(judges)
        assert row.details["mean"]["grounded"] == row.score
    # The model under test is counted apart from the judges.
    stats = fake.stats()
    assert stats["by_model"]["gx-gen-candidate"] == summary.candidate_calls == 4
    assert summary.candidate_prompt_tokens > 0
    assert summary.candidate_output_tokens > 0
    assert stats["by_model"]["gx-gen-judge-a"] == stats["by_model"]["gx-gen-judge-b"] == 7
    assert summary.judge_calls == 14
    metric = summary.metric_summary
    assert set(metric["per_judge"]) == set(judges)
    for figures in metric["per_judge"].values():
        assert figures["grounded"] == pytest.approx(5 / 7)
        assert figures["rows_scored"] == 7
    assert metric["agreement"]["rows_compared"] == 7
    assert metric["agreement"]["all_agree"] == 1.0  # the simulated judges are the same judge
    assert metric["agreement"]["fleiss_kappa"] == pytest.approx(1.0)
    assert metric["agreement"]["cohen_kappa"] == {" vs ".join(judges): pytest.approx(1.0)}
    assert metric["responses"] == {"given": 3, "generated": 4}

    # The same job through the CLI with the user's own answer template: the model under test
    # gets the new prompt; the judges see the same responses, so their replies come from cache.
    template = tmp_path / "answer.txt"
    template.write_text("Kindly answer (gx-user-template).\n{query}\n\nSource:\n{context}\n")
    fake.script([{"match": r"gx-user-template", "delay_ms": 1}])  # counts, then the brain answers
    env = worker_env(redis_server.url, fake.url)
    flags = ["--candidate-model", "gx-gen-candidate", "--prompt-template", str(template)]
    judged_by = [arg for j in judges for arg in ("--judge-model", j)]
    again = waited_summary(env, "run", "groundedness", str(dataset), *flags, *judged_by)
    assert again["candidate_calls"] == 4
    assert fake.stats()["script_rules_fired"] == {"0": 4}
    assert again["judge_calls"] == 0
    assert again["cache_hits"] == 14
    assert again["mean_score"] == pytest.approx(summary.mean_score)
    assert set(again["metric_summary"]["per_judge"]) == set(judges)


def test_bad_template_fails_before_anything_is_enqueued(
    client: Any, redis_server: RedisServer, tmp_path: Path
) -> None:
    data = write_rows(tmp_path / "d.jsonl", [{"query": QUERY, "context": CONTEXT}])
    before = redis_server.client().zcard("evalq:jobs")
    with pytest.raises(DatasetError, match=r"\{question\}"):
        client.submit(
            "groundedness", data, options={"prompt_template": "{question}\n{query}\n{context}"}
        )
    with pytest.raises(DatasetError, match=r"no \{context\}"):
        client.submit("groundedness", data, options={"prompt_template": "Answer {query}"})
    assert redis_server.client().zcard("evalq:jobs") == before


# ---- a long context travels as an id, not in task messages --------------------------------------

_ARG_RE = re.compile(r'"((?:[^"\\]|\\.)*)"')


def monitored_commands(log: Path) -> list[list[str]]:
    """Commands from `redis-cli monitor` output, each as its (unescaped) arguments."""
    commands = []
    for line in log.read_text(errors="replace").splitlines():
        args = _ARG_RE.findall(line)
        if args:
            commands.append([codecs.decode(a, "unicode_escape") if "\\" in a else a for a in args])
    return commands


def long_context(marker: str, size: int = 120_000) -> str:
    """The ethanol passage buried in ~120 KB (~30k tokens) of numbered filler paragraphs."""
    parts: list[str] = []
    n = 0
    while sum(len(p) for p in parts) < size // 2:
        n += 1
        parts.append(
            f"Paragraph {n} of the appendix lists committee minute {n * 7} and budget line "
            f"{n * 13}, which the review board filed without comment in session {n % 11}.\n"
        )
    filler = "".join(parts)
    return f"{marker}\n{filler}{ETHANOL_CONTEXT}\n{filler}"


def test_long_context_is_stored_once_and_messages_stay_small(tmp_path: Path) -> None:
    """Redis MONITOR sees every command any process sends (the producer, every worker and
    every Celery internal: queue pushes, the unacked hash, events, results, chord counters),
    so it records what the broker carries without hooks in the code under test."""
    marker = "LONGCTX-7f3a"
    context = long_context(marker)
    assert len(context.encode()) > 100_000
    rows = [
        {"id": "long-gen", "query": ETHANOL_QUERY, "context": context},
        {
            "id": "long-given",
            "query": ETHANOL_QUERY,
            "context": context,
            "response": "Farmers are producing corn more efficiently and using conservation "
            "practices that reduce greenhouse gas emissions. I hope this helps.",
        },
    ]
    data = write_rows(tmp_path / "long.jsonl", rows)
    with stack(tmp_path / "stack", concurrency=4) as s:
        log = tmp_path / "monitor.log"
        with log.open("w") as out:
            monitor = subprocess.Popen(
                ["redis-cli", "-u", s.redis.url, "monitor"], stdout=out, stderr=subprocess.STDOUT
            )
        try:
            wait_for(lambda: "OK" in log.read_text(), 10, "redis-cli monitor to attach")
            client = s.client()
            job = client.submit(
                "groundedness", data, judge_models=["long-judge-a", "long-judge-b"]
            ).job_id
            summary = client.wait(job, timeout_s=90)
            # The last tasks are acked after the summary is written. Once nothing is unacked,
            # a command of our own reaching the log (MONITOR keeps Redis's order) means every
            # command before it is in the log too.
            r = s.redis_client()
            wait_for(lambda: r.hlen("unacked") == 0, 30, "every task message to be acked")
            r.echo(f"end-of-{job}")
            wait_for(lambda: f"end-of-{job}" in log.read_text(), 10, "the monitor to catch up")
        finally:
            monitor.terminate()
            monitor.wait(timeout=10)
        results = {r.id: r for r in client.results(job)}
    assert summary.status == "finished"
    assert results["long-gen"].score == 1.0
    assert results["long-given"].score == 1.0
    assert summary.candidate_calls == 1
    assert summary.candidate_prompt_tokens > 25_000  # the context did reach the model

    commands = monitored_commands(log)
    queues = ("evalq.rows", "evalq.questions")
    pushes = [c for c in commands if c[0].upper() == "LPUSH" and c[1].startswith(queues)]
    # prepare_row per row, then two judge units and the aggregate callback per row.
    assert len(pushes) >= 2 * (1 + 2 + 1), len(pushes)
    # Celery's own traffic: everything but evalq's keys and evalq's Lua scripts (whose
    # arguments are evalq's stored results, not messages).
    celery = [
        c
        for c in commands
        if len(c) > 1
        and c[0].upper() not in ("EVAL", "EVALSHA", "SCRIPT")
        and not c[1].startswith("evalq:")
    ]
    assert any(c[0].upper() == "HSET" and c[1] == "unacked" for c in celery)
    # A gevent worker sends its task events in batches ("task.multi"): such a message holds
    # many events, so the bound holds for each event in it rather than for the whole message.
    batches = [c for c in celery if c[0].upper() == "PUBLISH" and c[1].endswith("task.multi")]
    events = [event for c in batches for event in batched_events(c[2])]
    singles = [c for c in celery if c not in batches]
    largest = max(len(arg.encode()) for c in singles for arg in c[1:])
    assert largest < 4096, largest
    assert all(len(json.dumps(event).encode()) < 4096 for event in events)
    # The only writes in all of Redis that hold the context are the rows, each stored once.
    holding = sorted((c[0].upper(), c[1]) for c in commands if any(marker in arg for arg in c[1:]))
    assert holding == [
        ("SET", f"evalq:job:{job}:row:1"),  # rows are keyed by line: long-gen
        ("SET", f"evalq:job:{job}:row:2"),  # long-given
    ]
    big = [c for c in commands if any(len(arg) > 100_000 for arg in c[1:])]
    assert len(big) == 2, [c[:2] for c in big]


def batched_events(message: str) -> list[dict[str, Any]]:
    """The events in one "task.multi" message as kombu's Redis transport publishes it (a JSON
    envelope whose body is the base64 of the JSON list of events)."""
    envelope = json.loads(message)
    events: list[dict[str, Any]] = json.loads(base64.b64decode(envelope["body"]))
    return events
