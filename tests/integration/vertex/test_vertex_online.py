"""Every metric on Vertex AI, online: one stack whose worker runs google-genai with
``vertexai=True`` (a project, a region, and a Vertex API key so that nothing asks Google for a
token) against the fake server's Vertex routes, every metric's example submitted together.

The fake counts its calls per route, so the test knows the judge calls really went to
``/v1beta1/projects/{p}/locations/{l}/publishers/google/models/...``, and none to the Gemini
API's. One Vertex 429 (a bare RESOURCE_EXHAUSTED, no RetryInfo) is scripted on the way: the
worker parks the model and retries, and the job still scores every row. Beside them, the
replay corpus's Vertex bodies (tests/fixtures/gemini_replies/vertex_*) come back through the
Vertex route to the client on ``vertexai=True``, read as the corpus says. A submit that says
Vertex AI but names no project is refused in one line, before anything is stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.integration.vertex.test_replay_corpus import expected_outcome, outcome_of
from tests.support.cli import run_evalq
from tests.support.datasets import write_rows
from tests.support.gemini_replies import load_replies
from tests.support.metric_examples import METRICS, metric_examples, submit_argv
from tests.support.secrets import assert_not_in_redis
from tests.support.stack import stack
from tests.support.vertex import VERTEX_ENV

pytestmark = pytest.mark.integration


# The corpus's recorded Vertex 200 bodies (its Vertex 429 is the scripted one below).
VERTEX_BODIES = sorted(
    name for name, r in load_replies().items() if r.api == "vertex" and r.status == 200
)


def _evalq(env: dict[str, str], *argv: str) -> tuple[int, str, str]:
    """`evalq ARGV` in this process (the click command the shell runs, a child process per
    submit costing seconds), under `env`: the submitter's own settings say Vertex AI too."""
    from evalq.client.cli import main

    done = CliRunner().invoke(main, list(argv), env=env, catch_exceptions=False)
    return done.exit_code, done.stdout, done.stderr


def test_every_metric_runs_on_vertex_through_its_routes(tmp_path: Path) -> None:
    examples = metric_examples(tmp_path / "data")
    with stack(tmp_path / "stack", **VERTEX_ENV) as s:
        env = s.env()
        redis = s.redis_client()
        replies = load_replies()
        rules: list[dict[str, object]] = [
            {
                "match": f"\\[\\[vertex-replay {name}\\]\\]",
                "status": 200,
                "body": replies[name].body,
            }
            for name in VERTEX_BODIES
        ]
        # Then the first summarization judge call gets Vertex's own 429, once.
        s.post("/script", [*rules, {"match": "summar", "status": 429, "times": 1}])
        corpus_rows = [
            {"id": name, "response": f"A short answer to rate. [[vertex-replay {name}]]"}
            for name in VERTEX_BODIES
        ]
        corpus = write_rows(tmp_path / "data" / "vertex-corpus.jsonl", corpus_rows)

        missing = {**env, "GOOGLE_CLOUD_PROJECT": ""}
        dataset, flags = examples["pointwise"]
        refused = run_evalq(missing, *submit_argv("pointwise", dataset, flags))
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert "needs GOOGLE_CLOUD_PROJECT" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
        assert not list(redis.scan_iter("evalq:*job*"))  # nothing stored

        jobs = {}
        for metric in METRICS:
            dataset, flags = examples[metric]
            argv = [*submit_argv(metric, dataset, flags), "--redis-url", s.redis.url, "--json"]
            code, out, err = _evalq(env, *argv)
            assert code == 0, f"{metric}: {out}{err}"
            jobs[metric] = str(json.loads(out)["job_id"])

        argv = ["run", "pointwise", str(corpus), "--template", "fluency", "--no-cache"]
        code, out, err = _evalq(env, *argv, "--redis-url", s.redis.url, "--json")
        assert code == 0, out + err
        corpus_job = str(json.loads(out)["job_id"])

        client = s.client()
        client.wait(corpus_job, timeout_s=300)
        read = {row.id: row for row in client.results(corpus_job)}
        rate_limited = 0
        for metric, job_id in jobs.items():
            summary = client.wait(job_id, timeout_s=300)
            assert summary.status == "finished", metric
            assert summary.rows_scored == summary.rows_total > 0, (metric, summary)
            assert summary.simulated, metric  # the fake's judge answered, through Vertex
            rate_limited += summary.rate_limited
        stats = s.stats()
        # The Vertex key is a secret like the Gemini API's: in no key or value, in no log.
        assert assert_not_in_redis(s.redis_client(), VERTEX_ENV["EVALQ_VERTEX_API_KEY"]) > 10
        logs = s.pool.logs()
    assert "ready." in logs and VERTEX_ENV["EVALQ_VERTEX_API_KEY"] not in logs

    assert rate_limited == 1  # the worker read the Vertex 429 as a rate limit, and retried

    assert stats["by_route"].get("vertex", 0) > 0
    assert "gemini" not in stats["by_route"], stats["by_route"]
    assert stats["by_status"].get("429") == 1  # the scripted one, retried and then answered
    assert stats["script_rules_fired"] == {str(n): 1 for n in range(len(VERTEX_BODIES) + 1)}
    for name in VERTEX_BODIES:
        want = expected_outcome(replies[name])
        got = outcome_of(replies[name], read[name])
        assert {k: got[k] for k in want} == want, f"{name} on the Vertex route: {got}"
    assert {e["route"] for e in stats["events"]} == {"vertex"}
